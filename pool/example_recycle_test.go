//go:build linux

// Examples with worker processes build where this package's Subprocess
// tests do, and an Example cannot skip.

package pool_test

import (
	"context"
	"fmt"

	"github.com/offloadgo/offload/pool"
)

// After a deploy of the worker program, RecycleWorkers puts a new process
// under every worker, one at a time, each old one leaving after its
// current task.
func ExamplePool_RecycleWorkers() {
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess})
	if err != nil {
		panic(err)
	}
	defer p.Shutdown(context.Background())
	out, err := pool.Run(context.Background(), p, square, 6)
	fmt.Println(out, err)

	// The worker program was deployed anew: put it in service.
	if err := p.RecycleWorkers(context.Background()); err != nil {
		// Matches pool.ErrWorkerStartFailed if the new program did not
		// start: the old processes serve on.
		fmt.Println(err)
	}
	out, err = pool.Run(context.Background(), p, square, 7)
	fmt.Println(out, err, p.Stats().Recycled)
	// Output:
	// 36 <nil>
	// 49 <nil> 1
}
