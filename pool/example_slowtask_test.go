package pool_test

import (
	"context"
	"fmt"
	"time"

	"github.com/offloadgo/offload/pool"
)

// A task still running SlowTaskAfter after it started is WorkerSlowTask,
// once, in a pool of any Isolation: nothing is done to it. Here the
// task waits to be told that it was reported.
func ExampleWorkerEventKind_workerSlowTask() {
	reported := make(chan pool.WorkerEvent, 1)
	p, err := pool.New(pool.Options{Workers: 1, SlowTaskAfter: 10 * time.Millisecond,
		Logger: quietLogger,
		OnWorkerEvent: func(ev pool.WorkerEvent) {
			if ev.Kind == pool.WorkerSlowTask {
				reported <- ev
			}
		}})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	out, err := pool.RunFunc(context.Background(), p, func(context.Context) (string, error) {
		ev := <-reported
		return fmt.Sprintf("%v: %s ran past %v", ev.Kind, ev.Task, ev.Running >= 10*time.Millisecond), nil
	})
	fmt.Println(out, err, p.Stats().Slow)
	// Output: slow task: func ran past true <nil> 1
}
