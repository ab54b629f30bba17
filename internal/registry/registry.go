// Package registry is the process's table of registered tasks, by name:
// package pool writes it (pool.Register, during program initialisation)
// and the transports' worker sides read it to run a task they know only by
// its name and its encoded input. It is the only package state the
// user's code writes, and only at init. The module's other package-level
// state is filled on first use and never by the user: caches by type or
// name (pool's closure definitions, the codec's and shmbuf's per-type
// facts) and one-per-process resources (shmbuf's shared-memory arena).
package registry

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Entry is the untyped view of a registered task.
type Entry struct {
	Name string
	// Fingerprint is the shape of the task's input and output types (see
	// Fingerprint): a worker built from another binary whose task of the
	// same name takes or gives something else has another.
	Fingerprint uint64
	// Invoke decodes the input into a fresh value of the task's input
	// type, runs the task and returns its output for the caller to encode.
	// It is nil for a task declared with pool.Extern, which a program of
	// another language runs.
	Invoke func(ctx context.Context, decode func(in any) error) (any, error)
	// Submit submits the task, on the input decode fills in, to p — a
	// *pool.Pool, typed any so that this package stays below pool — and
	// returns a wait for its output: how a worker node runs a call through
	// its local pool. freed, if not nil, is called once the task's slot
	// in p is free again — which for a task whose ctx ended is when the
	// task returns, after wait has returned — outside p's lock. Set by
	// pool.Register.
	Submit func(ctx context.Context, p any, decode func(in any) error, freed func()) (wait func() (any, error), err error)
}

var table = struct {
	sync.RWMutex
	tasks map[string]Entry
}{tasks: map[string]Entry{}}

// Len is the number of registered tasks: each task's index (from Add) is
// below it.
func Len() int {
	table.RLock()
	defer table.RUnlock()
	return len(table.tasks)
}

// Invoker returns the Invoke of a task that runs fn.
func Invoker[In, Out any](fn func(context.Context, In) (Out, error)) func(context.Context, func(any) error) (any, error) {
	return func(ctx context.Context, decode func(any) error) (any, error) {
		var in In
		if err := decode(&in); err != nil {
			return nil, err
		}
		return fn(ctx, in)
	}
}

// Add records e, or fails if its name is taken. It returns e's index: the
// tasks are numbered from 0 in the order they were added, so that a table
// per task can be a slice.
func Add(e Entry) (index int, err error) {
	table.Lock()
	defer table.Unlock()
	if _, dup := table.tasks[e.Name]; dup {
		return 0, fmt.Errorf("task %q registered twice", e.Name)
	}
	table.tasks[e.Name] = e
	return len(table.tasks) - 1, nil
}

// Lookup returns the task registered as name.
func Lookup(name string) (Entry, bool) {
	table.RLock()
	defer table.RUnlock()
	e, ok := table.tasks[name]
	return e, ok
}

// Names lists, in sorted order, the registered tasks that this binary
// runs: those with an Invoke.
func Names() []string {
	table.RLock()
	defer table.RUnlock()
	names := make([]string, 0, len(table.tasks))
	for n, e := range table.tasks {
		if e.Invoke != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
