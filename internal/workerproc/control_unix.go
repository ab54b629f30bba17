//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"syscall"
	"time"

	"github.com/offloadgo/offload/cancel"
)

// PID is the worker's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// ID is Spec.ID.
func (p *Process) ID() int { return p.spec.ID }

// Hello is the handshake the worker sent.
func (p *Process) Hello() Hello { return p.hello }

// Conn is the channel to the worker. When ReadFrame returns io.EOF the
// worker has closed its end or died: wait for Done and read Exit for the
// account. Closing the Conn asks the worker to exit (it reads EOF).
func (p *Process) Conn() *Conn { return p.conn }

// Done is closed once the worker has been reaped and Exit is set.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit is the account of how the worker ended: nil until Done is closed.
func (p *Process) Exit() *cancel.Exit {
	select {
	case <-p.done:
		return p.exit
	default:
		return nil
	}
}

// Kill sends the worker SIGKILL and returns at once, without waiting for
// the reap (watch Done). Once the worker is dead, and before Done, the
// rest of its process group (whatever it started and did not move out of
// the group) gets SIGKILL too, as whenever a worker ends. It is
// idempotent, and a no-op once Done.
func (p *Process) Kill() { p.kill(cancel.KilledByKill) }

// Interrupt sends the worker SIGINT (not its group): how a program of
// another language learns, beside a cancel frame, that its call must
// stop (see sdk/PROTOCOL.md). A no-op once Done.
func (p *Process) Interrupt() {
	select {
	case <-p.done:
		return
	default:
	}
	// As in kill: os.Process holds a pidfd, so the signal can't reach a
	// process that reused the pid.
	_ = p.cmd.Process.Signal(syscall.SIGINT)
}

// Terminate stops the worker in exec.Cmd's Cancel-then-WaitDelay shape:
// it calls ask (if not nil) on the calling goroutine, which should ask the
// worker to stop without blocking long — say, send a cancel frame —, then
// kills the worker, as Kill does (its process group with it), if it has
// not exited within grace (at once when grace <= 0). It does not block:
// the kill runs on a timer. stop cancels that kill, for a worker that did
// what ask asked and may live on; it reports whether it stopped the kill
// in time.
func (p *Process) Terminate(grace time.Duration, ask func()) (stop func() bool) {
	if ask != nil {
		ask()
	}
	if grace <= 0 {
		p.kill(cancel.KilledByTerminate)
		return func() bool { return false }
	}
	t := time.AfterFunc(grace, func() { p.kill(cancel.KilledByTerminate) })
	return t.Stop
}

// Close closes the channel, so the worker reads EOF and exits, waits up to
// Spec.CloseGrace for that, kills the worker if it is still running, and
// returns once it is reaped: afterwards no descriptor or goroutine of this
// worker is left, and every process in its group has been sent SIGKILL
// (they may take a moment to finish dying). A process that left the
// worker's group is not killed, nor waited for beyond 200 ms if it holds
// the worker's output open. Idempotent; it returns nil (the account of the
// end is Exit).
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.conn.Close()
		t := time.NewTimer(p.spec.CloseGrace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			p.kill(cancel.KilledByClose)
		}
	})
	<-p.done
	return nil
}
