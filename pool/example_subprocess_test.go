//go:build linux

// Examples with worker processes build where this package's Subprocess
// tests do, and an Example cannot skip.

package pool_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/offloadgo/offload/pool"
)

// Work for subprocess workers is registered at package level, so that the
// re-executed binary registers it too.
var square = pool.Register("example.square", func(_ context.Context, n int) (int, error) {
	return n * n, nil
})

var forever = pool.Register("example.forever", func(context.Context, struct{}) (int, error) {
	//lint:ignore SA5002 a runaway task that ignores its ctx, for the pool to kill
	for {
	}
})

// A Subprocess pool runs tasks in copies of the program; its main (and
// TestMain) must call pool.Main first. A task that ignores its ctx is
// killed when the ctx ends, and the pool goes on.
func ExampleMain() {
	// func main() {
	//	pool.Main()
	//	...
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess})
	if err != nil {
		panic(err)
	}
	defer p.Shutdown(context.Background())

	out, err := pool.Run(context.Background(), p, square, 12)
	fmt.Println(out, err)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = pool.Run(ctx, p, forever, struct{}{})
	fmt.Println(errors.Is(err, pool.ErrTerminated), errors.Is(err, context.DeadlineExceeded))

	out, err = pool.Run(context.Background(), p, square, 3)
	fmt.Println(out, err)
	// Output:
	// 144 <nil>
	// true true
	// 9 <nil>
}
