package testkit

import (
	"testing"
	"time"
)

// WaitBlocked returns once the goroutine named is parked in the state
// named, and not for a goroutine of another name.
func TestWaitBlockedFindsTheParkedGoroutine(t *testing.T) {
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		parkedForWaitBlocked(release)
	}()
	WaitBlocked(t, "chan receive", 10*time.Second, "testkit.parkedForWaitBlocked")
	close(release)
	<-done
}

func TestBlockedInNeedsStateAndEveryName(t *testing.T) {
	dump := "goroutine 1 [running]:\nmain.a()\n\ngoroutine 7 [IO wait, 2 minutes]:\nmain.b()\nnet.Read()\n"
	for _, c := range []struct {
		state string
		fns   []string
		want  bool
	}{
		{"IO wait", []string{"main.b", "net.Read"}, true},
		{"IO wait", []string{"main.a"}, false},
		{"running", []string{"main.a"}, true},
		{"chan receive", []string{"main.b"}, false},
		{"IO wait", []string{"main.b", "main.a"}, false},
	} {
		if got := blockedIn(dump, c.state, c.fns); got != c.want {
			t.Errorf("blockedIn(%q, %q) = %v, want %v", c.state, c.fns, got, c.want)
		}
	}
}

//go:noinline
func parkedForWaitBlocked(release <-chan struct{}) { <-release }
