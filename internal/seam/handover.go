package seam

import "sync/atomic"

// Handover tracks a call on its way to a worker process (or node), so that
// the caller and the runner agree on one story when the caller gives up
// while the task runs: if the call was sent, the task is told to stop (its
// process killed if it does not in time) and the caller gets
// ErrTerminated; if it was not, it never will be, and the caller gets the
// plain ctx error. InProcess calls stay not sent. The zero
// value is ready; safe for concurrent use.
type Handover struct{ state atomic.Uint32 }

const (
	notSent  uint32 = iota // not handed to a worker process
	sent                   // written to a process, which may be running it
	withheld               // the caller gave up before it was sent: it never will be
	quitting               // sent, then the caller gave up: the task is told to stop
	replied                // the process replied before the caller gave up
)

// Send claims the right to write the call to a process; false means the
// caller has given up, and the call must not be sent.
func (h *Handover) Send() bool { return h.state.CompareAndSwap(notSent, sent) }

// Unsend takes back a call the process never read (it died first), to
// send it to another; false means the caller has given up meanwhile.
func (h *Handover) Unsend() bool { return h.state.CompareAndSwap(sent, notSent) }

// Reply records that the process answered; false means the caller gave
// up first and was told ErrTerminated: the reply goes to nobody, but the
// task did return, and its process may serve on.
func (h *Handover) Reply() bool { return h.state.CompareAndSwap(sent, replied) }

// Quit records that the caller gave up (or the pool closed under the
// task), whichever side sees it first.
func (h *Handover) Quit() {
	if !h.state.CompareAndSwap(notSent, withheld) {
		h.state.CompareAndSwap(sent, quitting)
	}
}

// Terminates reports whether the task was sent and is told to stop: its
// caller's error is ErrTerminated.
func (h *Handover) Terminates() bool {
	s := h.state.Load()
	return s == sent || s == quitting
}
