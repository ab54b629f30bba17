package natsjobs_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// decodeNum reads a job's input from the query: ?n=4.
func decodeNum(r *http.Request) (Num, error) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil {
		return Num{}, errors.New("n: want a number")
	}
	return Num{n}, nil
}

// decodeKeyed reads a job's input from the query: ?key=k&sleep=1m.
func decodeKeyed(r *http.Request) (Keyed, error) {
	d, _ := time.ParseDuration(r.URL.Query().Get("sleep"))
	return Keyed{Key: r.URL.Query().Get("key"), Sleep: d}, nil
}

// status is a job's status as the handlers write it.
type status struct {
	ID      string
	Task    string
	State   string
	Attempt int
	Error   string
	Result  json.RawMessage
}

func post(t *testing.T, h http.Handler, target string) (*httptest.ResponseRecorder, status) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(testkit.Ctx(t), http.MethodPost, target, nil))
	var st status
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && rec.Code != http.StatusOK {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st), "%s", rec.Body)
	}
	return rec, st
}

// Accept answers 200 with the result when the job ends in time, 500 or
// 409 with its status when it ends dead or canceled, 202 with where to
// find its status when it doesn't, 400 for a bad input; StatusHandler
// serves that status, and 404 for an unknown id.
func TestAcceptAndStatusHandler(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 2}), natsjobs.ServeOptions{})
	wait := natsjobs.AcceptOptions{WaitFor: time.Minute}
	mux := http.NewServeMux()
	mux.Handle("GET /jobs/{id}", natsjobs.StatusHandler(q))

	rec, _ := post(t, natsjobs.Accept(q, double, decodeNum, wait), "/double?n=4")
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, "8", rec.Body.String())

	rec, _ = post(t, natsjobs.Accept(q, double, decodeNum, wait), "/double?n=four")
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "n: want a number")

	rec, st := post(t, natsjobs.Accept(q, permanent, decodeKeyed, wait), "/permanent?key="+key(t))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, "dead", st.State)
	assert.Contains(t, st.Error, "bad input, not worth retrying")

	// A job canceled before it ran: the same Key names it.
	k := key(t)
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: k, Sleep: time.Hour}, natsjobs.Key(k))
	require.NoError(t, err)
	require.NoError(t, q.Cancel(ctx, id))
	rec, st = post(t, natsjobs.Accept(q, sleepy, decodeKeyed, natsjobs.AcceptOptions{WaitFor: time.Minute,
		Enqueue: []natsjobs.EnqueueOption{natsjobs.Key(k)}}), "/sleepy?key="+k)
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Equal(t, "canceled", st.State)
	assert.Equal(t, string(id), st.ID)

	slow := natsjobs.Accept(q, sleepy, decodeKeyed, natsjobs.AcceptOptions{WaitFor: 20 * time.Millisecond})
	rec, st = post(t, slow, "/sleepy?sleep=1h&key="+key(t)+"-slow")
	assert.Equal(t, http.StatusAccepted, rec.Code)
	assert.Contains(t, []string{"queued", "running"}, st.State)
	assert.Equal(t, "natsjobs.sleepy", st.Task)
	assert.Equal(t, "/jobs/"+st.ID, rec.Header().Get("Location"))

	get := httptest.NewRecorder()
	mux.ServeHTTP(get, httptest.NewRequestWithContext(ctx, http.MethodGet, rec.Header().Get("Location"), nil))
	assert.Equal(t, http.StatusOK, get.Code)
	var again status
	require.NoError(t, json.Unmarshal(get.Body.Bytes(), &again))
	assert.Equal(t, st.ID, again.ID)
	require.NoError(t, q.Cancel(ctx, natsjobs.ID(st.ID)))

	get = httptest.NewRecorder()
	mux.ServeHTTP(get, httptest.NewRequestWithContext(ctx, http.MethodGet, "/jobs/nosuchjob", nil))
	assert.Equal(t, http.StatusNotFound, get.Code)
}

// StatusHandler gives a succeeded job's result through its task's Out
// type, once an Accept of the task made it known, and 202 with WaitFor
// 0.
func TestStatusHandlerResult(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	rec, st := post(t, natsjobs.Accept(q, double, decodeNum, natsjobs.AcceptOptions{}), "/double?n=21")
	require.Equal(t, http.StatusAccepted, rec.Code, "WaitFor 0: always 202")
	_, err := natsjobs.Wait(testkit.Ctx(t), q, double, natsjobs.ID(st.ID))
	require.NoError(t, err)

	get := httptest.NewRecorder()
	natsjobs.StatusHandler(q).ServeHTTP(get, httptest.NewRequestWithContext(testkit.Ctx(t), http.MethodGet, "/jobs/"+st.ID, nil))
	require.Equal(t, http.StatusOK, get.Code)
	var done status
	require.NoError(t, json.Unmarshal(get.Body.Bytes(), &done))
	assert.Equal(t, "succeeded", done.State)
	assert.Equal(t, 1, done.Attempt)
	assert.JSONEq(t, "42", string(done.Result))
}

// A full queue answers 503 with Retry-After, as a full pool does.
func TestAcceptFullQueue(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{MaxJobs: 1})
	h := natsjobs.Accept(q, double, decodeNum, natsjobs.AcceptOptions{})
	rec, _ := post(t, h, "/double?n=1")
	require.Equal(t, http.StatusAccepted, rec.Code)
	rec, _ = post(t, h, "/double?n=2")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
}
