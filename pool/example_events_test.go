//go:build linux

// Examples with worker processes build where this package's Subprocess
// tests do, and an Example cannot skip.

package pool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

var exitThree = pool.Register("example.exit3", func(context.Context, struct{}) (int, error) {
	os.Exit(3)
	return 0, nil
})

// exampleBundle holds a Buffer, which the worker lends the pool as it
// replies.
type exampleBundle struct {
	Name string
	Part *transfer.Buffer
}

var bundleOf = pool.Register("example.bundle", func(_ context.Context, n int) (exampleBundle, error) {
	b, err := transfer.NewBuffer(64)
	if err != nil {
		return exampleBundle{}, err
	}
	return exampleBundle{Name: strings.Repeat("x", n), Part: b}, nil
})

// eventsOf returns a hook for Options.OnWorkerEvent that passes on the
// events of kind, and the channel it passes them on. A hook must not
// block the pool: this one drops what the channel has no room for.
func eventsOf(kind pool.WorkerEventKind) (func(pool.WorkerEvent), <-chan pool.WorkerEvent) {
	ch := make(chan pool.WorkerEvent, 8)
	return func(ev pool.WorkerEvent) {
		if ev.Kind == kind {
			select {
			case ch <- ev:
			default:
			}
		}
	}, ch
}

// await returns the next event on ch, or, after 20 seconds, an event of
// kind 0, which prints as "none": an Example must not hang.
func await(ch <-chan pool.WorkerEvent) pool.WorkerEvent {
	select {
	case ev := <-ch:
		return ev
	case <-time.After(20 * time.Second):
		return pool.WorkerEvent{}
	}
}

// A worker process that is up and has said hello is WorkerStarted; the
// first of a worker replaces nothing.
func ExampleWorkerEventKind_workerStarted() {
	hook, started := eventsOf(pool.WorkerStarted)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, OnWorkerEvent: hook, Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	out, err := pool.Run(context.Background(), p, square, 4)
	fmt.Println(out, err)
	ev := await(started)
	fmt.Println(ev.Kind, ev.PID != 0, ev.Replacing)
	// Output:
	// 16 <nil>
	// started true none
}

// A worker process that does not say hello in time is WorkerStartFailed,
// and the task that waited for it fails with ErrWorkerStartFailed: it
// never ran.
func ExampleWorkerEventKind_workerStartFailed() {
	hook, failed := eventsOf(pool.WorkerStartFailed)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, OnWorkerEvent: hook, Logger: quietLogger,
		Subprocess: pool.SubprocessOptions{StartTimeout: time.Nanosecond}})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	_, err = pool.Run(context.Background(), p, square, 4)
	fmt.Println(errors.Is(err, pool.ErrWorkerStartFailed))
	ev := await(failed)
	fmt.Println(ev.Kind, ev.Err != nil)
	// Output:
	// true
	// start failed true
}

// A worker process that has served MaxTasksPerWorker tasks is
// WorkerRecycled, and its successor's WorkerStarted says what it replaces.
func ExampleWorkerEventKind_workerRecycled() {
	hook, recycled := eventsOf(pool.WorkerRecycled)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, OnWorkerEvent: hook, Logger: quietLogger,
		Subprocess: pool.SubprocessOptions{MaxTasksPerWorker: 1}})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	out, err := pool.Run(context.Background(), p, square, 5)
	fmt.Println(out, err)
	ev := await(recycled)
	fmt.Println(ev.Kind, p.Stats().Recycled)
	// Output:
	// 25 <nil>
	// recycled 1
}

// A worker process killed because its task's caller gave up and the task
// did not return within TerminateGrace is WorkerTerminated; it counts in
// Stats.Terminated.
func ExampleWorkerEventKind_workerTerminated() {
	hook, terminated := eventsOf(pool.WorkerTerminated)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, OnWorkerEvent: hook, Logger: quietLogger,
		Subprocess: pool.SubprocessOptions{TerminateGrace: 10 * time.Millisecond}})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	// A process that is up takes the call at once: a call whose caller
	// gives up before it reached its process kills nothing.
	out, err := pool.Run(context.Background(), p, square, 7)
	fmt.Println(out, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = pool.Run(ctx, p, forever, struct{}{}) // ignores its ctx
	fmt.Println(errors.Is(err, pool.ErrTerminated))
	ev := await(terminated)
	fmt.Println(ev.Kind, p.Stats().Terminated)
	// Output:
	// 49 <nil>
	// true
	// terminated 1
}

// A worker process that dies on its own is WorkerCrashed, with how it
// ended; the task it ran fails with ErrWorkerCrashed.
func ExampleWorkerEventKind_workerCrashed() {
	hook, crashed := eventsOf(pool.WorkerCrashed)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, OnWorkerEvent: hook, Logger: quietLogger})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	_, err = pool.Run(context.Background(), p, exitThree, struct{}{})
	fmt.Println(errors.Is(err, pool.ErrWorkerCrashed))
	ev := await(crashed)
	fmt.Println(ev.Kind, ev.Exit.Code)
	// Output:
	// true
	// crashed 3
}

// A worker process whose channel's books no longer agree with the pool's
// is WorkerRetired and replaced: here it lent out a Buffer for a reply it
// then could not send, larger than MaxPayload.
func ExampleWorkerEventKind_workerRetired() {
	hook, retired := eventsOf(pool.WorkerRetired)
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess, OnWorkerEvent: hook, Logger: quietLogger,
		Subprocess: pool.SubprocessOptions{MaxPayload: 4096}})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	_, err = pool.Run(context.Background(), p, bundleOf, 5000)
	fmt.Println(errors.Is(err, pool.ErrPayloadTooLarge))
	ev := await(retired)
	fmt.Println(ev.Kind)
	out, err := pool.Run(context.Background(), p, square, 6)
	fmt.Println(out, err)
	// Output:
	// true
	// retired
	// 36 <nil>
}
