//go:build unix

package workerproc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
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

// RSS samples the worker's resident memory in bytes (from /proc); it fails
// once the worker has exited.
func (p *Process) RSS() (int64, error) {
	f, err := os.Open(statmPath(p.PID()))
	if err != nil {
		return 0, fmt.Errorf("workerproc: worker %d rss: %w", p.ID(), err)
	}
	defer f.Close()
	return readRSS(f, make([]byte, 128))
}

// watchMemory kills the worker when its RSS exceeds the limit. It keeps
// /proc/PID/statm open and re-reads it: one pread per sample.
func (p *Process) watchMemory() {
	f, err := os.Open(statmPath(p.PID()))
	if err != nil {
		p.log.Warn("workerproc: cannot watch worker memory", "err", err)
		return
	}
	defer f.Close()
	tick := time.NewTicker(p.spec.MemoryPoll)
	defer tick.Stop()
	buf := make([]byte, 128)
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		rss, err := readRSS(f, buf)
		if err != nil {
			return // exited: the reaper takes it from here
		}
		if rss > p.spec.MemoryLimit {
			p.killedRSS.Store(rss)
			p.kill(cancel.KilledByMemoryLimit)
			return
		}
	}
}

func statmPath(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/statm" }

// readRSS parses the second field of statm: resident pages.
func readRSS(f *os.File, buf []byte) (int64, error) {
	n, err := f.ReadAt(buf, 0)
	if n == 0 {
		return 0, fmt.Errorf("workerproc: read %s: %w", f.Name(), err)
	}
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0, fmt.Errorf("workerproc: malformed %s", f.Name())
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("workerproc: malformed %s: %w", f.Name(), err)
	}
	return pages * int64(os.Getpagesize()), nil
}
