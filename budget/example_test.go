package budget_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/offloadgo/offload/budget"
)

// Loop keeps a long computation on the calling goroutine while letting
// others run every 5 ms.
func ExampleLoop() {
	var sum float64
	rep, err := budget.Loop(context.Background(), 1_000_000, func(i int) {
		sum += math.Sqrt(float64(i))
	}, budget.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("items=%d sum=%.0f yielded=%v\n", rep.Items, sum, rep.Yields > 0)
	// Output: items=1000000 sum=666666166 yielded=true
}

// Each with a Yield func: the loop holds a lock and lets waiters in between
// chunks.
func ExampleEach() {
	var mu sync.Mutex
	counts := map[string]int{}
	words := []string{"go", "offload", "go", "budget", "go"}

	mu.Lock()
	rep, err := budget.Each(context.Background(), words, func(w string) {
		counts[w]++
	}, budget.Options{
		Budget: time.Millisecond,
		Yield:  func() { mu.Unlock(); mu.Lock() },
	})
	mu.Unlock()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Items, counts["go"], counts["budget"])
	// Output: 5 3 1
}

// A Stepper runs one chunk per tick of a caller's loop.
func ExampleStepper() {
	total := 0
	s, err := budget.NewStepper(10_000, func(i int) { total += i }, budget.Options{Budget: 2 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	for tick := 0; ; tick++ {
		// ... the tick's other work ...
		more, err := s.Step(context.Background())
		if err != nil || !more {
			break
		}
	}
	fmt.Println(s.Done(), s.Report().Items, total)
	// Output: true 10000 49995000
}

// Chunks is the range-over-func form: the loop body runs between chunks.
func ExampleStepper_Chunks() {
	s, err := budget.NewStepper(100, func(int) {}, budget.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	covered := 0
	for c, err := range s.Chunks(context.Background()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		covered += c.End - c.Start // progress, a mailbox, a redraw ...
	}
	fmt.Println(covered)
	// Output: 100
}

// A background job that takes at most a quarter of a core.
func ExampleOptions_dutyCycle() {
	rep, err := budget.Loop(context.Background(), 8, func(int) {
		time.Sleep(time.Millisecond) // stands in for 1 ms of CPU
	}, budget.Options{Budget: time.Millisecond, DutyCycle: 0.25})
	if err != nil {
		fmt.Println(err)
		return
	}
	// About 3 ms of rest per 1 ms chunk, none after the last.
	fmt.Println(rep.Chunks, rep.Rest > rep.Busy)
	// Output: 8 true
}
