package pool

import (
	"context"
	"errors"
	"net/http"
	"strconv"
)

// WriteError answers an HTTP request whose Run (or Submit, or Future.Wait)
// failed with err, in the terms a client or load balancer understands:
//
//   - ErrQueueFull, ErrClosed or ErrWorkerStartFailed (nothing ran): 503
//     Service Unavailable with Retry-After (from the pool's predicted drain
//     time when w comes from Shed, else 1 s);
//   - context.DeadlineExceeded or ErrTerminated: 504 Gateway Timeout;
//   - ErrWorkerCrashed or ErrNodeLost: 502 Bad Gateway, since the worker
//     died under the task, which may have run (retry only what is safe to
//     run twice);
//   - anything else, a task's own error or panic included: 500.
//
// The body is the status text only: err's message may carry internals, so
// log it yourself if you want it. A nil err writes nothing.
//
// When w is Shed's writer, or wraps it (through Unwrap methods, as
// http.ResponseController looks), WriteError writes nothing if the handler
// has already started the response, so a handler may call it on any error
// path without writing twice. A plain http.ResponseWriter can't tell
// whether it was written to: outside Shed, call WriteError only before
// writing. A wrapper that buffers above Shed's writer hides its own
// unflushed writes.
func WriteError(w http.ResponseWriter, err error) {
	if err == nil {
		return
	}
	sw := findShedWriter(w)
	if sw != nil && sw.written {
		return
	}
	code := errorStatus(err)
	if code == http.StatusServiceUnavailable {
		retry := 1
		if sw != nil {
			retry = sw.shed.retryAfter(sw.shed.pool.Load())
		}
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	http.Error(w, http.StatusText(code), code)
}

// errorStatus maps a pool error to its HTTP status. Overload comes first:
// work that an expired Shutdown dropped is ErrClosed and also carries the
// shutdown's deadline, and the client should retry elsewhere, not wait.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, ErrQueueFull), errors.Is(err, ErrClosed), errors.Is(err, ErrWorkerStartFailed):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrTerminated):
		return http.StatusGatewayTimeout
	case errors.Is(err, ErrWorkerCrashed): // ErrNodeLost too
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// findShedWriter returns Shed's writer under w, or nil.
func findShedWriter(w http.ResponseWriter) *shedWriter {
	for w != nil {
		switch t := w.(type) {
		case *shedWriter:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
	return nil
}
