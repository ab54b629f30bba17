package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/offloadgo/offload/pool"
)

// scenario is one server configuration and the load offered to it. A
// reference scenario is one table row; an overload scenario is one row per
// phase.
type scenario struct {
	Group      string  // the table section
	Name       string  // the row
	Procs      int     // the server's GOMAXPROCS; 0 leaves the default
	JobsPerSec float64 // reference scenarios: jobs evenly spaced
	Mode       string  // /job?mode=...; "" sends no jobs
	Server     serverConfig
	Phases     []float64 // overload: job rates as multiples of the pool's capacity
	// Cores says Phases are multiples of what the server's cores can do
	// (GOMAXPROCS jobs at once), not of the overload pool's capacity: the
	// jobs run in the handlers themselves.
	Cores bool
}

// capacity is the jobs per second sc's phases are multiples of.
func (sc scenario) capacity(jobTime time.Duration) float64 {
	if sc.Cores {
		return float64(runtime.GOMAXPROCS(0)) / jobTime.Seconds() // the server's, on the same machine
	}
	return capacity(jobTime)
}

// The saturated scenarios: 200 ms jobs inline in the handlers at twice
// what the cores can do, then half, without Shed and with Shed's MaxLag
// at 20 and 50 ms in front of them, and a readiness probe (pool.Ready,
// MaxLag as the row's Shed, readyLag without one) asked ten times a
// second by a client that waits probeTimeout, as a kubelet's default
// timeoutSeconds does.
var (
	saturatedPhases = []float64{2, 0.5}
	saturatedMaxLag = []time.Duration{20 * time.Millisecond, 50 * time.Millisecond}
)

const (
	readyLag     = 50 * time.Millisecond
	probeRate    = 10 // probes a second
	probeTimeout = time.Second
)

// overloadPhases are the issue's: 0.5×, 1×, 2×, 5× and 10× the pool's
// capacity, then back to 0.5× to see it recover.
var overloadPhases = []float64{0.5, 1, 2, 5, 10, 0.5}

// The overload pool: one worker (the default on 2 cores; in process
// unless -overload-pool says proc1), and for (b) and (c) a queue of 8
// (1.6 s of 200 ms jobs), so that (b) shows the wait a bounded queue alone
// allows and (c) what MaxWait cuts it to.
const (
	overloadWorkers  = 1
	overloadMaxQueue = 8
	overloadMaxWait  = 400 * time.Millisecond
)

// overloadQueueDelay backs Shed's prediction in (c): pool.DefaultQueueDelay,
// which for one worker and 200 ms jobs drops a task that waited 400 ms in a
// queue not empty for 800 ms, so that one an early, optimistic prediction
// let in does not wait much past MaxWait.
var overloadQueueDelay = pool.DefaultQueueDelay()

// scenarios is the lab's table, in order; overloadPool ("pool1" or
// "proc1") is the overload scenarios' pool.
func scenarios(overloadPool string) []scenario {
	var all []scenario
	ref := func(group string, procs int, jobs float64, mode, label string) {
		s := scenario{Group: group, Name: label, Procs: procs, JobsPerSec: jobs, Mode: mode}
		if _, ok := poolSpec(mode); ok {
			s.Server.Pool = mode
		}
		all = append(all, s)
	}
	const g = "reference: 200 ms CPU jobs beside /fast"
	ref(g, 0, 0, "", "only /fast")
	for _, m := range []struct{ mode, label string }{
		{"inline", "inline"}, {"chunk1", "chunked 1 ms"}, {"chunk5", "chunked 5 ms"}, {"chunk20", "chunked 20 ms"},
		{"chunk20after", "chunked 20 ms, yield after each"},
		{"pool1", "pool 1 worker"}, {"pool2", "pool 2 workers"}, {"proc1", "subprocess 1 worker"}, {"proc2", "subprocess 2 workers"},
		{"remote1", "remote 1 node"}, {"remote2", "remote 2 nodes"},
	} {
		ref(g, 0, 1, m.mode, "1 job/s, "+m.label)
	}
	for _, m := range []struct{ mode, label string }{
		{"inline", "inline"}, {"chunk5", "chunked 5 ms"},
		{"pool1", "pool 1 worker"}, {"pool2", "pool 2 workers"}, {"proc1", "subprocess 1 worker"}, {"proc2", "subprocess 2 workers"},
		{"remote1", "remote 1 node"}, {"remote2", "remote 2 nodes"},
		{"proc1nice", "subprocess 1 worker, Nice 10"}, {"proc2nice", "subprocess 2 workers, Nice 10"},
		{"remote1nice", "remote 1 node, nice 10"}, {"remote2nice", "remote 2 nodes, nice 10"},
	} {
		ref(g, 0, 4, m.mode, "4 jobs/s, "+m.label)
	}
	all = append(all, jobScenarios(g)...)
	const g1 = "server GOMAXPROCS=1"
	ref(g1, 1, 0, "", "only /fast")
	for _, m := range []struct{ mode, label string }{
		{"inline", "inline"}, {"chunk5", "chunked 5 ms"}, {"chunk5netpoll", "chunked 5 ms, yield = budget.NetpollYield"},
		{"chunk20", "chunked 20 ms"}, {"chunk20after", "chunked 20 ms, yield after each"},
		{"pool1", "pool 1 worker"}, {"proc1", "subprocess 1 worker"},
	} {
		ref(g1, 1, 1, m.mode, "1 job/s, "+m.label)
	}
	for _, v := range []struct {
		group    string
		maxQueue int
		shed     bool
		maxWait  time.Duration
		delay    pool.QueueDelay
	}{
		{"overload (a): unbounded queue, no Shed", pool.Unbounded, false, 0, pool.QueueDelay{}},
		{fmt.Sprintf("overload (b): MaxQueue %d, Shed on queue full only", overloadMaxQueue), overloadMaxQueue, true, 0, pool.QueueDelay{}},
		{fmt.Sprintf("overload (c): MaxQueue %d, Shed MaxWait %v, pool.DefaultQueueDelay", overloadMaxQueue, overloadMaxWait),
			overloadMaxQueue, true, overloadMaxWait, overloadQueueDelay},
	} {
		all = append(all, scenario{
			Group: v.group, Name: v.group, Mode: overloadPool, Phases: overloadPhases,
			Server: serverConfig{Pool: overloadPool, MaxQueue: v.maxQueue, Shed: v.shed, MaxWait: v.maxWait, QueueDelay: v.delay},
		})
	}
	for _, maxLag := range append([]time.Duration{0}, saturatedMaxLag...) {
		name, ready := "no Shed", readyLag
		if maxLag > 0 {
			name, ready = fmt.Sprintf("Shed MaxLag %v", maxLag), maxLag
		}
		group := fmt.Sprintf("saturated, %s: 200 ms jobs inline in the handlers (no pool), phases x what the cores can do; probe MaxLag %v", name, ready)
		all = append(all, scenario{
			Group: group, Name: group, Mode: "inline", Phases: saturatedPhases, Cores: true,
			Server: serverConfig{MaxLag: maxLag, ReadyLag: ready},
		})
	}
	all = append(all, saturatedCPU()...)
	return all
}

// capacity is the jobs per second the overload pool can finish.
func capacity(jobTime time.Duration) float64 {
	return overloadWorkers / jobTime.Seconds()
}
