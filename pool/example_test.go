package pool_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/offloadgo/offload/pool"
)

type SumIn struct{ A, B int }

// Sum is registered at package level, so that worker processes know it too.
var Sum = pool.Register("example.sum", func(_ context.Context, in SumIn) (int, error) {
	return in.A + in.B, nil
})

func ExampleRun() {
	p, err := pool.New(pool.Options{Workers: 2}) // MaxQueue auto = 4
	if err != nil {
		panic(err)
	}
	defer p.Close()

	out, err := pool.Run(context.Background(), p, Sum, SumIn{A: 1, B: 2})
	if errors.Is(err, pool.ErrQueueFull) {
		fmt.Println("busy: answer 503")
		return
	}
	fmt.Println(out, err)
	// Output: 3 <nil>
}

func ExampleSubmit() {
	p, err := pool.New(pool.Options{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer p.Shutdown(context.Background())

	var futures []*pool.Future[int]
	for i := range 3 {
		f, err := pool.Submit(context.Background(), p, Sum, SumIn{A: i, B: 10})
		if err != nil {
			panic(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		out, err := f.Wait()
		fmt.Println(out, err)
	}
	// Output:
	// 10 <nil>
	// 11 <nil>
	// 12 <nil>
}

// SubmitAll takes a fan-out as one admission: all of it, or none of it
// when the pool lacks room (here 2 workers + an auto queue of 4).
func ExampleSubmitAll() {
	p, err := pool.New(pool.Options{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer p.Shutdown(context.Background())

	ins := []SumIn{{A: 0, B: 10}, {A: 1, B: 10}, {A: 2, B: 10}}
	futures, err := pool.SubmitAll(context.Background(), p, Sum, ins)
	if err != nil {
		panic(err)
	}
	for _, f := range futures {
		out, err := f.Wait()
		fmt.Println(out, err)
	}

	_, err = pool.SubmitAll(context.Background(), p, Sum, make([]SumIn, 7))
	fmt.Println(errors.Is(err, pool.ErrQueueFull), err)
	// Output:
	// 10 <nil>
	// 11 <nil>
	// 12 <nil>
	// true pool: queue is full: a batch of 7 tasks, room for 6
}
