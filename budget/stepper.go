package budget

import (
	"context"
	"iter"
)

// Stepper runs a loop of n items one chunk per call, for callers that must
// return between chunks: a game or UI loop that calls Step once per tick, an
// actor that handles its mailbox between chunks. Returning from Step is the
// yield, so a Stepper never yields or rests itself: Options.Yield,
// DutyCycle and NoYieldFirst are validated but otherwise unused.
//
// Create one with NewStepper; the zero value is not usable. A Stepper is
// not safe for concurrent use: one goroutine at a time may call its
// methods.
type Stepper struct {
	n    int
	next int
	fn   func(i int)
	r    *runner
	last Chunk
}

// NewStepper returns a Stepper over items 0 to n-1, calling fn(i) for each.
// Bad arguments (n < 0, nil fn, invalid opts) return an error matching
// ErrInvalidOptions.
func NewStepper(n int, fn func(i int), opts Options) (*Stepper, error) {
	if err := checkArgs(n, fn == nil, opts); err != nil {
		return nil, err
	}
	return &Stepper{n: n, fn: fn, r: newRunner(opts)}, nil
}

// Step runs the next chunk (about Options.Budget of items, at least one) on
// the calling goroutine and returns. more reports whether items remain.
// If ctx has ended, Step runs nothing and returns ctx.Err(); the Stepper
// stays where it was and a later Step with a live ctx carries on. Once all
// items have run, Step returns (false, nil) at once.
func (s *Stepper) Step(ctx context.Context) (more bool, err error) {
	if s.next >= s.n {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return true, err
	}
	s.step()
	return s.next < s.n, nil
}

// step runs one chunk; the caller has checked that items remain.
func (s *Stepper) step() Chunk {
	c := s.r.chunk(s.next, s.n, s.run)
	s.next, s.last = c.End, c
	return c
}

func (s *Stepper) run(lo, hi int) {
	for i := lo; i < hi; i++ {
		s.fn(i)
	}
}

// Chunks returns an iterator that runs the remaining chunks one per
// iteration and yields each after it ran; the loop body is where the caller
// lets others in. If ctx ends, the iterator yields (Chunk{Start: next, End:
// next}, ctx.Err()) once, where next is the first item not run, and stops.
// Breaking out of the loop leaves the Stepper after the last chunk yielded;
// ranging over Chunks again (or calling Step) resumes there. With iter.Pull
// the iterator can be advanced once per tick.
func (s *Stepper) Chunks(ctx context.Context) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for s.next < s.n {
			if err := ctx.Err(); err != nil {
				yield(Chunk{Start: s.next, End: s.next}, err)
				return
			}
			if !yield(s.step(), nil) {
				return
			}
		}
	}
}

// Done reports whether every item has run.
func (s *Stepper) Done() bool { return s.next >= s.n }

// Next returns the index of the first item not yet run (n when done).
func (s *Stepper) Next() int { return s.next }

// Last returns the latest chunk run (the zero Chunk before the first).
func (s *Stepper) Last() Chunk { return s.last }

// Report returns the run so far. Total spans from the start of the first
// chunk to the end of the latest one.
func (s *Stepper) Report() Report { return s.r.report }
