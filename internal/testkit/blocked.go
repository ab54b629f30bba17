package testkit

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// WaitBlocked waits until a goroutine whose stack names every one of fns
// is in state (as a goroutine dump names it: "IO wait", "syscall",
// "chan receive", ...), and fails the test if none is within d. It lets a
// test act once another goroutine is where the test means it to be, by a
// signal rather than by a sleep that hopes so.
func WaitBlocked(t testing.TB, state string, d time.Duration, fns ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	buf := make([]byte, 1<<20)
	for {
		dump := string(buf[:runtime.Stack(buf, true)])
		if blockedIn(dump, state, fns) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine in %q reached %q within %v:\n%s", fns, state, d, dump)
		}
		time.Sleep(time.Millisecond) // a poll of the dump, not a guess at timing
	}
}

// blockedIn reports whether a goroutine of dump is in state with every one
// of fns on its stack. A dump's goroutines are blocks separated by blank
// lines, each headed "goroutine N [state, ...]:".
func blockedIn(dump, state string, fns []string) bool {
	for g := range strings.SplitSeq(dump, "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if strings.Contains(head, "["+state) && containsAll(g, fns) {
			return true
		}
	}
	return false
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
