// Package budget runs long loops on the caller's goroutine in chunks bounded
// by a time budget, yielding between chunks (and before the first) so that
// whatever shares that goroutine, lock or core stays responsive.
//
// Chunks are cut by time, not by item count: a chunk runs items until
// Options.Budget (5 ms by default) is spent, so the longest block stays near
// the budget whatever the items cost. The clock is read rarely but often
// enough: the number of items between two clock reads adapts to the
// measured cost per item, aiming at Budget/100 between reads, so cheap
// items pay almost nothing for the checks (a read costs tens of
// nanoseconds). Near the end of a chunk the last stride is cut to land just
// past the budget: uniform items overrun it by less than one item. A slow
// item among cheap ones overruns it by its own cost plus at most one read
// interval of cheap items, not by a fixed batch of items; the stride then
// drops to one item and grows back by doubling.
//
// Three forms share that machinery:
//
//   - [Each] and [Loop] run the whole loop before returning, yielding between
//     chunks with runtime.Gosched, a caller-supplied func (unlock, let others
//     in, lock again; [NetpollYield] when the loop shares its only P with
//     network handlers) or a duty cycle that rests so the loop takes at most
//     a given share of a core.
//   - [Stepper] runs one chunk per call, for loops that must return between
//     ticks (a game or UI loop, an actor, a Raft apply loop).
//   - [Stepper.Chunks] is the same as a Go range-over-func iterator; with
//     iter.Pull it resumes between ticks.
//
// Work that is a single call (a regexp match, a big JSON decode) cannot be
// chunked; run it elsewhere (package pool).
package budget
