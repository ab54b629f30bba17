package natsjobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/pool"
)

// AcceptOptions configure Accept.
type AcceptOptions struct {
	// WaitFor is how long Accept waits for the job to end before it
	// answers 202: a job that ends sooner is answered with its end. 0
	// means always 202.
	WaitFor time.Duration
	// StatusPath is where the job's status is served (StatusHandler),
	// before its id, for the 202's Location. "" means "/jobs/".
	StatusPath string
	// Enqueue holds options for every job this handler enqueues (Key,
	// MaxAttempts, Timeout).
	Enqueue []EnqueueOption
}

// Accept is an HTTP handler that turns each request into a job of task:
// decode reads the input from the request (400 with its error), Enqueue
// stores the job (503 with Retry-After through pool.WriteError when the
// queue is full; pool.WriteError's status for any other failure), and
// the handler waits up to WaitFor for the job to end:
//
//   - succeeded: 200, the output as JSON;
//   - dead: 500, the job's status as StatusHandler writes it;
//   - canceled: 409, the same;
//   - still queued or running: 202, the same, with Location: StatusPath
//     and the id.
//
// The wait costs no poll (see Wait). A client that goes away meanwhile
// leaves its job queued or running.
func Accept[In, Out any](q *Queue, task pool.Task[In, Out], decode func(*http.Request) (In, error), o AcceptOptions) http.Handler {
	if o.StatusPath == "" {
		o.StatusPath = "/jobs/"
	}
	q.learnOutput(task.Name(), func(b []byte) (any, error) {
		var out Out
		err := codec.Unmarshal(b, &out)
		return out, err
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, err := decode(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, err := Enqueue(r.Context(), q, task, in, o.Enqueue...)
		if err != nil {
			pool.WriteError(w, err)
			return
		}
		code, out := http.StatusAccepted, any(nil)
		if o.WaitFor > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), o.WaitFor)
			out, err = Wait(ctx, q, task, id)
			cancel()
			code = acceptedStatus(err)
		}
		if code == http.StatusOK {
			writeJSON(w, code, out)
			return
		}
		st, err := q.statusJSON(r.Context(), id)
		if err != nil {
			pool.WriteError(w, err)
			return
		}
		if code == http.StatusAccepted {
			w.Header().Set("Location", o.StatusPath+string(id))
		}
		writeJSON(w, code, st)
	})
}

// acceptedStatus is Accept's status for Wait's err.
func acceptedStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrDead):
		return http.StatusInternalServerError
	case errors.Is(err, ErrCanceled):
		return http.StatusConflict
	}
	return http.StatusAccepted // not ended within WaitFor (or the client left)
}

// StatusHandler is an HTTP handler that answers a job's status as JSON,
// for the id that is the last segment of the request's path (or its
// {id} wildcard): {"id", "task", "state", "attempt", "error", "result",
// "enqueued", "started", "finished"}, "result" once the job succeeded,
// decoded through its task's Out type if this Queue has an Accept for the
// task, else as the output's fields by name; 404 for an id the queue
// doesn't know (or no longer keeps).
func StatusHandler(q *Queue) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if id == "" {
			id = path.Base(strings.TrimSuffix(r.URL.Path, "/"))
		}
		st, err := q.statusJSON(r.Context(), ID(id))
		switch {
		case errors.Is(err, ErrNotFound):
			http.Error(w, fmt.Sprintf("natsjobs: no job %q", id), http.StatusNotFound)
		case err != nil:
			pool.WriteError(w, err)
		default:
			writeJSON(w, http.StatusOK, st)
		}
	})
}

// jobJSON is a job's status as the handlers write it.
type jobJSON struct {
	ID       ID         `json:"id"`
	Task     string     `json:"task"`
	State    string     `json:"state"`
	Attempt  int        `json:"attempt"`
	Error    string     `json:"error,omitempty"`
	Result   any        `json:"result,omitempty"`
	Enqueued time.Time  `json:"enqueued"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
}

// statusJSON is id's status, with its output once it succeeded.
func (q *Queue) statusJSON(ctx context.Context, id ID) (jobJSON, error) {
	if !validID(id) {
		return jobJSON{}, ErrNotFound
	}
	st, r, err := q.status(ctx, id)
	if err != nil {
		return jobJSON{}, err
	}
	j := jobJSONOf(st)
	if st.State == Succeeded {
		if j.Result, err = q.decodeOutput(st.Task, r.Out); err != nil {
			return jobJSON{}, fmt.Errorf("natsjobs: decode output of job %s: %w", id, err)
		}
	}
	return j, nil
}

// jobJSONOf is st as the handlers write it, without a result.
func jobJSONOf(st Status) jobJSON {
	j := jobJSON{ID: st.ID, Task: st.Task, State: st.State.String(), Attempt: st.Attempt, Error: st.Err, Enqueued: st.Enqueued}
	if !st.Started.IsZero() {
		j.Started = &st.Started
	}
	if !st.Finished.IsZero() {
		j.Finished = &st.Finished
	}
	return j
}

// learnOutput records how to decode task's output, for StatusHandler.
func (q *Queue) learnOutput(task string, decode func([]byte) (any, error)) {
	q.outputs.Store(task, decode)
}

// decodeOutput decodes an output of task: through its Out type if this
// Queue learnt it, else into maps of its fields by name.
func (q *Queue) decodeOutput(task string, b []byte) (any, error) {
	if d, ok := q.outputs.Load(task); ok {
		return d.(func([]byte) (any, error))(b)
	}
	var out any
	err := codec.Unmarshal(b, &out)
	return out, err
}

// writeJSON writes v as a JSON body with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "natsjobs: encode the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
