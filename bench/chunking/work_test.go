package chunking

import (
	"math"
	"runtime"
	"time"
)

// floatWork is the reference's "small float loop": a short dependent chain
// of float operations, about 100 ns on a current x86 core, that the
// compiler cannot fold away.
func floatWork(x float64) float64 {
	for range 24 {
		x = math.Sqrt(x*x+1.5) * 0.999
	}
	return x
}

// spinFor burns CPU for about d. Its cost is set by the clock, not by an
// iteration count, so "1 µs" and "3 ms" items stay that long on a noisy
// machine.
func spinFor(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// ticker watches the scheduler from the outside: a goroutine that wants to
// run every millisecond and records the longest gap between two of its
// wake-ups, as a request handler sharing the loop's P would see it.
type ticker struct {
	stop  chan struct{}
	done  chan struct{}
	worst time.Duration
}

// startTicker starts the watcher and returns once it has ticked, so that it
// is really running when the measured work starts.
func startTicker() *ticker {
	t := &ticker{stop: make(chan struct{}), done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		defer close(t.done)
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		<-tk.C
		close(started)
		last := time.Now()
		for {
			select {
			case <-tk.C:
			case <-t.stop:
				t.worst = max(t.worst, time.Since(last))
				return
			}
			now := time.Now()
			t.worst = max(t.worst, now.Sub(last))
			last = now
		}
	}()
	<-started
	return t
}

// halt stops the watcher and returns the worst gap it saw.
func (t *ticker) halt() time.Duration {
	close(t.stop)
	<-t.done
	return t.worst
}

// withProcs runs fn with GOMAXPROCS set to procs (0: leave it) and restores
// the previous value afterwards.
func withProcs(procs int, fn func()) {
	if procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	}
	fn()
}

// everyThousand is the reference page's loop, for comparison: read the clock
// every 1,000 items and yield when the budget is spent. It returns every
// block's length in wall-clock and in thread CPU time.
func everyThousand(items []time.Duration, fn func(time.Duration), budget time.Duration) (wall, cpu []time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runtime.Gosched()
	start, startCPU := time.Now(), threadCPU()
	for i, it := range items {
		fn(it)
		if i%1000 == 999 {
			if el := time.Since(start); el > budget {
				wall, cpu = append(wall, el), append(cpu, threadCPU()-startCPU)
				runtime.Gosched()
				start, startCPU = time.Now(), threadCPU()
			}
		}
	}
	return append(wall, time.Since(start)), append(cpu, threadCPU()-startCPU)
}

// sink keeps the float results alive; only benchmark goroutines write it,
// once per op.
var sink float64
