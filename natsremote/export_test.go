package natsremote

import "time"

// SchedulingSlack is what a bound asserted on a shared machine, under
// -race and beside other work, allows for timers and goroutines running
// late: generous, since what it bounds is "not forever".
const SchedulingSlack = 2 * time.Second

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
	kindEnded: "ended", kindLost: "lost", kindPong: "pong", kindLate: "late", kindAdvert: "advert",
}
