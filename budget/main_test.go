package budget

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeClock is a clock that moves only when told to: items advance it by
// their cost and sleeps by their length, so strides, blocks and rests are
// exact. It is used from one goroutine.
type fakeClock struct {
	t      time.Duration
	sleeps []time.Duration
}

func (c *fakeClock) now() time.Duration { return c.t }

func (c *fakeClock) sleep(_ context.Context, d time.Duration) {
	c.sleeps = append(c.sleeps, d)
	c.t += d
}

func (c *fakeClock) advance(d time.Duration) { c.t += d }

// withFake returns opts driven by a new fake clock.
func withFake(opts Options) (Options, *fakeClock) {
	c := &fakeClock{}
	opts.clock = c
	return opts, c
}

// spin burns CPU on the calling goroutine for about d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
