package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/pool"
)

const (
	defaultWidth = 128
	maxWidth     = 1024
	maxBody      = 8 << 20 // bytes of PNG
)

// thumbHandler serves POST /thumb?width=N: the posted PNG scaled down to
// N pixels wide, as a PNG, made by a Python worker of p. Each request has
// deadline to be read and served, set before Shed looks at it: Shed
// answers 503 when p is full, or when the wait it predicts ends past the
// deadline; a task still running at its deadline is stopped (see
// newPool), and the client gets 504.
func thumbHandler(p *pool.Pool, deadline time.Duration) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		width := defaultWidth
		if v := r.URL.Query().Get("width"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxWidth {
				http.Error(w, fmt.Sprintf("width: want 1 to %d", maxWidth), http.StatusBadRequest)
				return
			}
			width = n
		}
		image, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			http.Error(w, fmt.Sprintf("the body is over %d MiB", maxBody>>20), http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := pool.Run(r.Context(), p, Thumb, ThumbIn{Width: width, Image: image})
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", strconv.Itoa(len(out.Image)))
		_, _ = w.Write(out.Image)
	})
	shed := pool.Shed(p, pool.ShedOptions{})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), deadline)
		defer cancel()
		shed.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeError answers a failed thumb task: 422 for an image the worker
// refused (its BadImage exception), 502 for a worker killed by its
// memory limit, and pool.WriteError's status for the rest (503 when the
// pool is full, 504 past the deadline, 502 for another crash, 500 for
// another exception, whose traceback goes to the log, not the client).
func writeError(w http.ResponseWriter, err error) {
	if exception, ok := errors.AsType[*pool.RemoteError](err); ok {
		if exception.Type == "BadImage" {
			http.Error(w, exception.Error(), http.StatusUnprocessableEntity)
			return
		}
		log.Printf("thumb: %v\n%s", exception, exception.Traceback)
	}
	if exit, ok := errors.AsType[*cancel.Exit](err); ok && exit.Killed == cancel.KilledByMemoryLimit {
		http.Error(w, fmt.Sprintf("the image needs more than the worker's %d MiB of memory", exit.MemoryLimit>>20),
			http.StatusBadGateway)
		return
	}
	pool.WriteError(w, err)
}
