// Command demo exercises an in-process offload pool and prints what it did:
// a burst that overflows the bounded queue, a cancelled queued task, a
// deadline on a running task, a panic, the pool's stats, and a few of the
// lines its Prometheus endpoint serves.
//
//	go run ./bench/demo
//	go run ./bench/demo -debug localhost:6060  # then keep serving /debug/metrics, /debug/vars, /debug/pprof/
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/offloadgo/offload/pool"
)

// hash is CPU-bound work: rounds of a small integer hash.
// It checks its ctx now and then, as a well-behaved goroutine task must.
var hash = pool.Register("demo.hash", func(ctx context.Context, rounds int) (uint64, error) {
	x := uint64(rounds) | 1
	for done := 0; done < rounds; done += 1 << 16 {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		x = mix(x, min(1<<16, rounds-done))
	}
	return x, nil
})

func mix(x uint64, rounds int) uint64 {
	for range rounds {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

var crash = pool.Register("demo.panic", func(context.Context, string) (int, error) {
	panic("demo: something went wrong")
})

func main() {
	debugAddr := flag.String("debug", "", "after the tour, serve /debug/metrics, /debug/vars and /debug/pprof/ on this address, with a trickle of work, until interrupted")
	flag.Parse()
	if err := run(*debugAddr); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(debugAddr string) error {
	p, err := pool.New(pool.Options{Workers: 2}) // MaxQueue auto = 2² = 4
	if err != nil {
		return err
	}
	defer p.Close()
	mux, err := debugMux(p)
	if err != nil {
		return err
	}
	o := p.Options()
	fmt.Printf("pool: %d workers, MaxQueue %d (auto = Workers²), capacity %d\n\n", o.Workers, o.MaxQueue, o.Workers+o.MaxQueue)

	rounds := calibrate(20 * time.Millisecond)
	ctx := context.Background()

	fmt.Println("1. a burst of 10 tasks of ~20 ms into a pool that holds 6:")
	var accepted []*pool.Future[uint64]
	for i := range 10 {
		f, err := pool.Submit(ctx, p, hash, rounds+i)
		switch {
		case errors.Is(err, pool.ErrQueueFull):
			fmt.Printf("   task %d: rejected at once (%v) -> a server answers 503\n", i, err)
		case err != nil:
			return err
		default:
			accepted = append(accepted, f)
		}
	}
	for _, f := range accepted {
		if _, err := f.Wait(); err != nil {
			return err
		}
	}
	fmt.Printf("   %d accepted tasks finished\n\n", len(accepted))

	fmt.Println("2. a queued task whose caller gives up leaves the queue at once:")
	var blockers []*pool.Future[uint64]
	for range 2 {
		f, err := pool.Submit(ctx, p, hash, rounds*5)
		if err != nil {
			return err
		}
		blockers = append(blockers, f)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queued, err := pool.Submit(cctx, p, hash, rounds)
	if err != nil {
		return err
	}
	fmt.Printf("   queued: %d\n", p.Stats().Queued)
	cancel()
	_, err = queued.Wait()
	fmt.Printf("   after cancel: %v; queued: %d\n\n", err, p.Stats().Queued)
	for _, f := range blockers {
		if _, err := f.Wait(); err != nil {
			return err
		}
	}

	fmt.Println("3. a deadline on a running task returns its caller on time:")
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Millisecond)
	start := time.Now()
	_, err = pool.Run(dctx, p, hash, rounds*50)
	dcancel()
	fmt.Printf("   Run returned after %v: %v\n\n", time.Since(start).Round(time.Millisecond), err)

	fmt.Println("4. a panicking task fails alone; the worker goes on:")
	_, err = pool.Run(ctx, p, crash, "x")
	var pe *pool.PanicError
	if errors.As(err, &pe) {
		fmt.Printf("   *pool.PanicError: %v\n", pe.Value)
	}
	if _, err := pool.Run(ctx, p, hash, 1000); err != nil {
		return err
	}
	fmt.Println("   the next task ran fine")
	fmt.Println()

	fmt.Println("5. what the /debug/metrics endpoint serves (a few of its lines):")
	if err := showMetrics(mux); err != nil {
		return err
	}
	fmt.Println()
	if debugAddr != "" {
		return serveDebug(ctx, debugAddr, mux, p, rounds)
	}

	sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
	defer scancel()
	if err := p.Shutdown(sctx); err != nil {
		return err
	}
	st := p.Stats()
	fmt.Println("6. stats after Shutdown:")
	fmt.Printf("   submitted %d, completed %d, failed %d, rejected %d, canceled %d\n",
		st.Submitted, st.Completed, st.Failed, st.Rejected, st.Canceled)
	fmt.Printf("   wait time p50 %v p99 %v max %v\n", ms(st.WaitTime.P50), ms(st.WaitTime.P99), ms(st.WaitTime.Max))
	fmt.Printf("   run time  p50 %v p99 %v max %v\n", ms(st.RunTime.P50), ms(st.RunTime.P99), ms(st.RunTime.Max))
	fmt.Printf("   utilization %.0f%%\n", st.Utilization*100)
	return nil
}

// calibrate returns the hash rounds that take about d on this machine.
func calibrate(d time.Duration) int {
	for n := 1 << 16; ; n *= 2 {
		start := time.Now()
		sink = mix(sink, n)
		if el := time.Since(start); el > 5*time.Millisecond {
			return int(float64(n) * float64(d) / float64(el))
		}
	}
}

var sink uint64

func ms(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
