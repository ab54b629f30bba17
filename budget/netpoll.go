package budget

import (
	"runtime"
	"time"
)

// netpollNap is how long NetpollYield parks the caller: long enough that
// its timer has not fired when the scheduler next looks for work (so that
// it goes on to poll the network), short against a chunk.
const netpollNap = 50 * time.Microsecond

// NetpollYield is a Yield for loops that share their only P with network
// handlers: a process run with GOMAXPROCS=1, as Go sets it in a container
// limited to one CPU. There the default runtime.Gosched lets runnable
// goroutines in but not the network: the yielder waits on the global run
// queue, which the scheduler serves before it polls the network, so a
// request that arrives during a chunk is seen only when sysmon polls, up
// to 10 ms later, and then waits for the next yield. NetpollYield parks
// the caller on a short timer instead; with nothing runnable the scheduler
// polls the network at once and runs the handlers it woke. Its
// runtime.Gosched afterwards keeps the loop from cutting in front of them
// when the timer fires first.
//
// The price is idle time. When nothing else is waiting, the P sleeps until
// the timer fires, and the runtime's network wait has a 1 ms granularity,
// so a yield costs up to about a millisecond: the job takes longer and the
// handlers wait less (the lab, go run ./bench/lab, measures both in its
// GOMAXPROCS=1 rows; docs/benchmarks.md has the figures). With more than
// one P, an idle P polls the network anyway, so keep the default there.
func NetpollYield() {
	time.Sleep(netpollNap)
	runtime.Gosched()
}
