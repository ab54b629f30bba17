package natsjobs_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// adminMux mounts q's AdminHandler under /admin, as an operator would.
func adminMux(q *natsjobs.Queue) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/admin/", http.StripPrefix("/admin", natsjobs.AdminHandler(q)))
	return mux
}

// call serves one request through h, with headers given as pairs.
func call(t *testing.T, h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(testkit.Ctx(t), method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// listed is a page of jobs as the admin handler writes it.
type listed struct {
	State string
	Jobs  []status
	Next  *string
}

func decodeJSON[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"), "%d %s", rec.Code, rec.Body)
	var v T
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v), "%s", rec.Body)
	return v
}

// An operator finds a dead job through the admin handler, looks at it,
// runs it again, and sees it succeed.
func TestAdminFindsAndRerunsADeadJob(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	h := adminMux(q)
	ctx := testkit.Ctx(t)
	id, err := natsjobs.Enqueue(ctx, q, flaky, Keyed{Key: key(t)}, natsjobs.MaxAttempts(1))
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, flaky, id)
	require.ErrorIs(t, err, natsjobs.ErrDead)

	rec := call(t, h, http.MethodGet, "/admin/jobs?state=dead")
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	page := decodeJSON[listed](t, rec)
	assert.Equal(t, "dead", page.State)
	assert.Nil(t, page.Next, "the end of the list")
	require.Len(t, page.Jobs, 1)
	assert.Equal(t, status{ID: string(id), Task: "natsjobs.flaky", State: "dead", Attempt: 1, Error: "flake"}, page.Jobs[0])

	rec = call(t, h, http.MethodGet, "/admin/jobs/"+string(id))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "dead", decodeJSON[status](t, rec).State)

	rec = call(t, h, http.MethodPost, "/admin/jobs/"+string(id)+"/retry")
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	again := decodeJSON[status](t, rec)
	assert.Equal(t, string(id), again.ID)
	assert.Contains(t, []string{"queued", "running", "succeeded"}, again.State)

	out, err := natsjobs.Wait(ctx, q, flaky, id)
	require.NoError(t, err)
	assert.Equal(t, "fine", out)
	rec = call(t, h, http.MethodGet, "/admin/jobs/"+string(id))
	require.Equal(t, http.StatusOK, rec.Code)
	done := decodeJSON[status](t, rec)
	assert.Equal(t, "succeeded", done.State)
	assert.Equal(t, 1, done.Attempt, "run again from its first attempt")
	assert.JSONEq(t, `"fine"`, string(done.Result))

	rec = call(t, h, http.MethodGet, "/admin/jobs?state=dead")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"state":"dead","jobs":[]}`, rec.Body.String())
	rec = call(t, h, http.MethodGet, "/admin/jobs?state=succeeded")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, string(id), decodeJSON[listed](t, rec).Jobs[0].ID)

	rec = call(t, h, http.MethodPost, "/admin/jobs/"+string(id)+"/retry")
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, rec.Body.String(), "is succeeded, not dead")
}

// Every route's answers: pages by cursor, cancel, and each error.
func TestAdminHandlerAnswers(t *testing.T) {
	t.Parallel()
	q, _ := startQueue(t, natsjobs.Options{})
	h := adminMux(q)
	ctx := testkit.Ctx(t)
	var ids []string
	for range 3 {
		id, err := natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: time.Hour})
		require.NoError(t, err)
		ids = append(ids, string(id))
	}

	// Pages of one, by their next, to the end.
	var paged []string
	target := "/admin/jobs?state=queued&limit=1"
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		rec := call(t, h, http.MethodGet, target)
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
		page := decodeJSON[listed](t, rec)
		require.LessOrEqual(t, len(page.Jobs), 1)
		for _, j := range page.Jobs {
			assert.Equal(t, "queued", j.State)
			paged = append(paged, j.ID)
		}
		if page.Next == nil {
			break
		}
		target = "/admin/jobs?state=queued&limit=1&after=" + url.QueryEscape(*page.Next)
	}
	assert.Equal(t, ids, paged)

	rec := call(t, h, http.MethodPost, "/admin/jobs/"+ids[0]+"/retry")
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, rec.Body.String(), "is queued, not dead")

	rec = call(t, h, http.MethodPost, "/admin/jobs/"+ids[0]+"/cancel", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, rec.Code, "a browser's POST from another site")
	rec = call(t, h, http.MethodPost, "/admin/jobs/"+ids[0]+"/cancel")
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	assert.Equal(t, "canceled", decodeJSON[status](t, rec).State)
	rec = call(t, h, http.MethodPost, "/admin/jobs/"+ids[0]+"/cancel")
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, rec.Body.String(), "natsjobs: job has ended")
	rec = call(t, h, http.MethodPost, "/admin/jobs/"+ids[0]+"/retry")
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Contains(t, rec.Body.String(), "is canceled, not dead")
	rec = call(t, h, http.MethodGet, "/admin/jobs?state=canceled")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, ids[0], decodeJSON[listed](t, rec).Jobs[0].ID)

	for _, c := range []struct {
		method, target string
		code           int
		body           string
	}{
		{http.MethodGet, "/admin/jobs", http.StatusBadRequest, `state "": want one of scheduled, queued, running, retrying, succeeded, dead, canceled`},
		{http.MethodGet, "/admin/jobs?state=lost", http.StatusBadRequest, `state "lost"`},
		{http.MethodGet, "/admin/jobs?state=dead&limit=0", http.StatusBadRequest, `limit "0": want 1 to 1000`},
		{http.MethodGet, "/admin/jobs?state=dead&limit=1001", http.StatusBadRequest, `limit "1001"`},
		{http.MethodGet, "/admin/jobs?state=dead&limit=ten", http.StatusBadRequest, `limit "ten"`},
		{http.MethodGet, "/admin/jobs?state=dead&after=x", http.StatusBadRequest, `"x" is no cursor of a list of dead jobs`},
		{http.MethodGet, "/admin/jobs?state=dead&after=queued.3", http.StatusBadRequest, `"queued.3" is no cursor`},
		{http.MethodGet, "/admin/jobs/nosuchjob", http.StatusNotFound, `no job "nosuchjob"`},
		{http.MethodGet, "/admin/jobs/no.such.job", http.StatusNotFound, `no job "no.such.job"`},
		{http.MethodPost, "/admin/jobs/nosuchjob/retry", http.StatusNotFound, `no job "nosuchjob"`},
		{http.MethodPost, "/admin/jobs/nosuchjob/cancel", http.StatusNotFound, `no job "nosuchjob"`},
		{http.MethodGet, "/admin/nothing", http.StatusNotFound, "404 page not found"},
		{http.MethodGet, "/admin/jobs/" + ids[1] + "/extra/path", http.StatusNotFound, "404 page not found"},
	} {
		rec := call(t, h, c.method, c.target)
		assert.Equal(t, c.code, rec.Code, "%s %s: %s", c.method, c.target, rec.Body)
		assert.Contains(t, rec.Body.String(), c.body, "%s %s", c.method, c.target)
	}
	for _, c := range []struct{ method, target, allow string }{
		{http.MethodPost, "/admin/jobs", "GET, HEAD"},
		{http.MethodDelete, "/admin/jobs/" + ids[1], "GET, HEAD"},
		{http.MethodGet, "/admin/jobs/" + ids[1] + "/retry", "POST"},
		{http.MethodPut, "/admin/jobs/" + ids[1] + "/cancel", "POST"},
	} {
		rec := call(t, h, c.method, c.target)
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "%s %s", c.method, c.target)
		assert.Equal(t, c.allow, rec.Header().Get("Allow"), "%s %s", c.method, c.target)
	}
	st, err := q.Status(ctx, natsjobs.ID(ids[1]))
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Queued, st.State, "untouched by the refused requests")
}

// A retry into a full queue is refused with 503 and Retry-After, and
// leaves the job dead.
func TestAdminRetryIntoAFullQueue(t *testing.T) {
	t.Parallel()
	q, nc := startQueue(t, natsjobs.Options{MaxJobs: 1})
	serve(t, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
	h := adminMux(q)
	ctx := testkit.Ctx(t)
	dead, err := natsjobs.Enqueue(ctx, q, permanent, Keyed{Key: key(t)})
	require.NoError(t, err)
	_, err = natsjobs.Wait(ctx, q, permanent, dead)
	require.ErrorIs(t, err, natsjobs.ErrDead)
	require.Eventually(t, func() bool { return queuedJobs(t, nc) == 0 }, 20*time.Second, 5*time.Millisecond, "moved aside")
	_, err = natsjobs.Enqueue(ctx, q, sleepy, Keyed{Key: key(t), Sleep: time.Hour}) // the one job the queue holds
	require.NoError(t, err)

	rec := call(t, h, http.MethodPost, "/admin/jobs/"+string(dead)+"/retry")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "%s", rec.Body)
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	st, err := q.Status(ctx, dead)
	require.NoError(t, err)
	assert.Equal(t, natsjobs.Dead, st.State)
}
