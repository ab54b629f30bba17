package budget

import (
	"context"
	"time"
)

// clock is the time source of one run. It is an interface only so that
// tests can drive the chunker with a fake clock and assert exact strides
// and rests instead of timing-dependent bounds.
type clock interface {
	// now returns the time elapsed since the clock's origin.
	now() time.Duration
	// sleep waits for d or until ctx ends, whichever comes first.
	sleep(ctx context.Context, d time.Duration)
}

// realClock reads the monotonic clock relative to origin.
type realClock struct{ origin time.Time }

func newRealClock() realClock { return realClock{origin: time.Now()} }

func (c realClock) now() time.Duration { return time.Since(c.origin) }

func (realClock) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// clockOf returns the clock for a run with opts.
func clockOf(opts Options) clock {
	if opts.clock != nil {
		return opts.clock
	}
	return newRealClock()
}
