package subproc

import (
	"context"
	"time"

	"github.com/offloadgo/offload/internal/seam"
)

// stopTask is the pool's side of a running call whose caller gave up (or
// whose pool closed): l runs call id, and its caller has been told
// ErrTerminated already. l is asked to cancel the task's ctx and is killed
// if the task has not returned within TerminateGrace. stopTask returns
// once one or the other has happened, so the worker's slot stays busy
// until then: a task that ignores its ctx holds its process, and its
// slot, for the grace, as it would in process.
//
// A task that returns in time keeps its process, which takes the next
// call: a cancel must not cost a process start. Its reply is read, for the
// Buffer traffic it carries, and goes nowhere: the call's future is
// settled already, and the reply's frame ID is this call's, so it can't
// be taken for the next call's answer. Only a kill counts as Terminated;
// a process that dies on its own within the grace is a crash.
func (r *runner) stopTask(ctx context.Context, l *child, m *seam.Call, id uint64) {
	kill := l.proc.Terminate(time.Duration(r.sp.grace), func() { r.askStop(l, id, ctx) })
	for {
		select {
		case f := <-l.frames:
			if f.ID != id {
				closeFDs(f.FDs)
				continue // a late reply to an earlier call; not expected, harmless
			}
			if kill() {
				_ = r.receive(l, m, f, false) // returned within the grace: l serves on
				return
			}
			closeFDs(f.FDs) // the reply crossed the kill: l is dying all the same
			r.retire(l, seam.Terminated)
			return
		case <-l.gone:
			if kill() {
				r.bury(l) // it ended by itself before its grace was out
			} else {
				r.retire(l, seam.Terminated)
			}
			return
		}
	}
}
