// Package prof puts the pool's tasks under pprof labels, so that a CPU
// profile attributes samples to tasks (go tool pprof -tagfocus task=NAME).
package prof

import (
	"context"
	"runtime/pprof"
)

// Labels is the label set of one task in one kind of worker: a context
// carrying the pprof labels task=Name and isolation=Isolation, made once
// and set on the goroutine that runs each call. Setting it costs a
// pointer store: no allocation per call, unlike pprof.Do.
type Labels struct{ ctx context.Context }

// New returns the labels of task in isolation.
func New(task, isolation string) Labels {
	return Labels{pprof.WithLabels(context.Background(), pprof.Labels("task", task, "isolation", isolation))}
}

// Set puts the calling goroutine, and the goroutines it starts from now
// on, under l's labels.
func (l Labels) Set() { pprof.SetGoroutineLabels(l.ctx) }

// Clear takes the calling goroutine's labels off.
func Clear() { pprof.SetGoroutineLabels(context.Background()) }
