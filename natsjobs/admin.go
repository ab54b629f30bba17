package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/offloadgo/offload/pool"
)

// AdminHandler is an HTTP handler for an operator of queue q: it lists
// the jobs in a state, page by page, shows one, runs a dead one again
// and cancels one, answering JSON. Its paths are its own, so it can be
// mounted under any prefix with http.StripPrefix:
//
//	mux.Handle("/admin/", http.StripPrefix("/admin", natsjobs.AdminHandler(q)))
//
// It serves:
//
//   - GET /jobs?state=dead&limit=100&after=...: a page of the jobs in
//     state (see ListPage, for the order and the cost):
//     {"state", "jobs": [...], "next"}, each job as StatusHandler writes
//     it but without its result. "next" is the after of the next page,
//     absent at the list's end. limit is 1 to 1,000, 100 if absent. 400
//     for a state missing or unknown, a bad limit, or an after that is
//     no cursor of a list of state.
//   - GET /jobs/{id}: the job as StatusHandler writes it; 404 for an id
//     the queue doesn't know (or no longer keeps).
//   - POST /jobs/{id}/retry: runs the dead job again (Retry), and answers
//     200 with its status as GET does; 404 for an unknown id; 409 for a
//     job that is not dead; 503 with Retry-After when the queue is full.
//   - POST /jobs/{id}/cancel: cancels the job (Cancel), and answers 200
//     with its status; 404 for an unknown id; 409 for a job that had
//     ended.
//
// Another method on these paths is answered 405 with Allow, any other
// path 404; errors are plain text. A POST from a browser on another
// origin is refused with 403 (http.CrossOriginProtection).
//
// AdminHandler has no authentication or authorization of its own:
// whoever reaches it can read every job and cancel or re-run any. Serve
// it only behind the operator's own authentication, on a listener the
// public can't reach.
func AdminHandler(q *Queue) http.Handler {
	a := admin{q: q}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jobs", a.list)
	mux.Handle("GET /jobs/{id}", StatusHandler(q))
	mux.HandleFunc("POST /jobs/{id}/retry", a.act(q.Retry))
	mux.HandleFunc("POST /jobs/{id}/cancel", a.act(q.Cancel))
	return http.NewCrossOriginProtection().Handler(mux)
}

type admin struct{ q *Queue }

// listJSON is a page of jobs as the admin handler writes it.
type listJSON struct {
	State string    `json:"state"`
	Jobs  []jobJSON `json:"jobs"`
	Next  string    `json:"next,omitempty"`
}

func (a admin) list(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	state, ok := parseState(query.Get("state"))
	if !ok {
		http.Error(w, fmt.Sprintf("natsjobs: state %q: want one of %s", query.Get("state"), strings.Join(stateNames[Scheduled:], ", ")),
			http.StatusBadRequest)
		return
	}
	var o ListOptions
	if v := query.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			http.Error(w, fmt.Sprintf("natsjobs: limit %q: want 1 to %d", v, maxListLimit), http.StatusBadRequest)
			return
		}
		o.Limit = n
	}
	o.After = query.Get("after")
	if _, err := parseCursor(state, o.After); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	page, err := a.q.ListPage(r.Context(), state, o)
	if err != nil {
		pool.WriteError(w, err)
		return
	}
	out := listJSON{State: state.String(), Jobs: make([]jobJSON, len(page.Jobs)), Next: page.Next}
	for i, st := range page.Jobs {
		out.Jobs[i] = jobJSONOf(st)
	}
	writeJSON(w, http.StatusOK, out)
}

// act serves a POST that does do to its job, and answers with the
// job's status.
func (a admin) act(do func(context.Context, ID) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := ID(r.PathValue("id"))
		err := do(r.Context(), id)
		switch {
		case err == ErrNotFound:
			http.Error(w, fmt.Sprintf("natsjobs: no job %q", id), http.StatusNotFound)
			return
		case errors.Is(err, ErrNotFound):
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		case errors.Is(err, ErrEnded):
			http.Error(w, err.Error(), http.StatusConflict)
			return
		case err != nil:
			pool.WriteError(w, err)
			return
		}
		st, err := a.q.statusJSON(r.Context(), id)
		if err != nil {
			pool.WriteError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, st)
	}
}
