package natsremote

import "time"

// SchedulingSlack is what a bound asserted on a shared machine, under
// -race and beside other work, allows for timers and goroutines running
// late: generous, since what it bounds is "not forever".
const SchedulingSlack = 2 * time.Second

// TestHeartbeat is the tests' heartbeat: short, so that losses show fast,
// yet long enough that a busy machine under -race keeps live nodes live. A
// node is lost after 2.5 silent heartbeats. At 100 ms a 2-core machine at
// load 6 (several -race test runs side by side) stalled a live node's
// pongs past the loss; at 300 ms, load 15 to 30 (six engineers' -race runs
// and benchmarks) still did, in 6 of 8 runs of the package, each time in
// another liveness-dependent test ("silent for 1.218s").
const TestHeartbeat = time.Second

// KindName names a protocol message's kind, for tests that watch the
// subjects: "call", "ping", "full", "result", ...
func KindName(data []byte) string {
	if len(data) < 2 || data[0] != protoVersion {
		return "?"
	}
	if name, ok := kindNames[data[1]]; ok {
		return name
	}
	return "?"
}

var kindNames = map[byte]string{
	kindCall: "call", kindCancel: "cancel", kindPing: "ping",
	kindFull: "full", kindUnknown: "unknown", kindResult: "result", kindError: "error",
	kindPanic: "panic", kindGoexit: "goexit", kindTooLarge: "too-large", kindCrashed: "crashed",
	kindEnded: "ended", kindLost: "lost", kindPong: "pong", kindLate: "late", kindNotStarted: "not-started",
	kindAdvert: "advert",
}
