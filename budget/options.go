package budget

import (
	"fmt"
	"math"
	"time"
)

// DefaultBudget is the chunk budget used when Options.Budget is zero: the
// reference measurement's 5 ms, short enough that whoever waits on the
// goroutine, lock or core sees a few milliseconds of delay at most.
const DefaultBudget = 5 * time.Millisecond

// Options configures Each, Loop and NewStepper. The zero value is ready to
// use: a 5 ms budget, runtime.Gosched between chunks and before the first.
type Options struct {
	// Budget is how long a chunk runs before the loop yields. A chunk ends
	// at the first clock read at or past Budget, so it overruns by about one
	// item's cost (see the package doc for the exact bound). Every chunk
	// runs at least one item. Zero means DefaultBudget; negative is an
	// error.
	Budget time.Duration

	// Yield is called on the calling goroutine between chunks, and before
	// the first chunk unless NoYieldFirst is set: for example a func that
	// unlocks a mutex, lets waiters in and locks it again. nil means
	// runtime.Gosched, which does not let the network in when the process
	// has one P (GOMAXPROCS=1): use NetpollYield there. Yield and DutyCycle
	// are exclusive; a caller that needs both can sleep inside its own
	// Yield.
	Yield func()

	// DutyCycle, when in (0, 1), caps the share of a core the loop takes:
	// between chunks the loop rests (sleeps, waking early when ctx ends) so
	// that busy time / (busy + rest) stays at most DutyCycle over the run.
	// The rest owed is carried from chunk to chunk, so a sleep that
	// overshoots is paid back by a shorter one. 0 and 1 mean no rest (the
	// loop yields as if DutyCycle were unset); values outside [0, 1] are an
	// error. There is no rest after the last chunk.
	DutyCycle float64

	// NoYieldFirst skips the yield before the first chunk. By default the
	// loop yields first, so work started from a handler does not run its
	// first chunk back to back with whatever ran before it (the lab, go run
	// ./bench/lab, compares the two as "chunked 20 ms" and "chunked 20 ms,
	// yield after each").
	NoYieldFirst bool

	// clock is a test hook: nil means the real monotonic clock.
	clock clock
}

// budget returns the effective chunk budget.
func (o Options) budget() time.Duration {
	if o.Budget == 0 {
		return DefaultBudget
	}
	return o.Budget
}

// validate reports bad options; the error wraps ErrInvalidOptions.
func (o Options) validate() error {
	switch {
	case o.Budget < 0:
		return fmt.Errorf("%w: negative Budget %v", ErrInvalidOptions, o.Budget)
	case math.IsNaN(o.DutyCycle) || o.DutyCycle < 0 || o.DutyCycle > 1:
		return fmt.Errorf("%w: DutyCycle %v outside [0, 1]", ErrInvalidOptions, o.DutyCycle)
	case o.Yield != nil && o.resting():
		return fmt.Errorf("%w: Yield and DutyCycle are exclusive", ErrInvalidOptions)
	}
	return nil
}

// resting reports whether the duty cycle asks for rests at all.
func (o Options) resting() bool {
	return o.DutyCycle > 0 && o.DutyCycle < 1
}

// checkArgs validates the arguments shared by Loop, Each and NewStepper.
func checkArgs(n int, fnNil bool, opts Options) error {
	if n < 0 {
		return fmt.Errorf("%w: negative item count %d", ErrInvalidOptions, n)
	}
	if fnNil {
		return fmt.Errorf("%w: nil func", ErrInvalidOptions)
	}
	return opts.validate()
}
