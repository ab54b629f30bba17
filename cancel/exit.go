package cancel

import (
	"fmt"
	"strings"
	"syscall"
)

// KillReason says why the pool killed a worker process, if it did.
type KillReason int

const (
	// NotKilled: the worker ended by itself (or by someone else's signal).
	NotKilled KillReason = iota
	// KilledByKill: the pool killed the worker at once, without a grace:
	// it was alive but its channel to the pool had broken, so it could no
	// longer be told anything.
	KilledByKill
	// KilledByTerminate: the worker was running a task whose caller gave
	// up; it was told to stop, and the pool's TerminateGrace ran out before
	// the task returned.
	KilledByTerminate
	// KilledByMemoryLimit: the worker's resident memory exceeded the pool's
	// MemoryLimit.
	KilledByMemoryLimit
	// KilledByClose: the pool asked the worker to exit (at shutdown, or to
	// retire it) and it did not exit within its grace.
	KilledByClose
	// KilledByStart: the worker did not finish starting: its handshake with
	// the pool timed out (StartTimeout), was abandoned, or was malformed.
	KilledByStart
)

func (r KillReason) String() string {
	switch r {
	case NotKilled:
		return "not killed"
	case KilledByKill:
		return "kill"
	case KilledByTerminate:
		return "terminate"
	case KilledByMemoryLimit:
		return "memory limit"
	case KilledByClose:
		return "close"
	case KilledByStart:
		return "failed start"
	}
	return fmt.Sprintf("KillReason(%d)", int(r))
}

// Exit is the account of how a worker process ended, as the pool learned
// it once the process was gone: a Subprocess pool's pool.ErrWorkerCrashed
// errors and its pool.WorkerCrashed events carry one. It is an error whose message
// reads, for instance, "cancel: worker 3 (pid 1234) exited with status 3;
// stderr: ..." or "... exceeded memory limit 64 MiB (rss 70 MiB) and was
// killed". Treat it as read-only.
type Exit struct {
	// ID and PID identify the worker.
	ID, PID int
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Signal is the signal that ended the process, or 0.
	Signal syscall.Signal
	// Killed says why the pool killed the worker, or NotKilled.
	Killed KillReason
	// RSS is the memory sample that broke MemoryLimit: the worker's RSS
	// plus what its descendants and open memfds held, as the pool's
	// SubprocessOptions.MemoryLimit counts it (bytes; set when Killed is
	// KilledByMemoryLimit).
	RSS int64
	// MemoryLimit is the pool's MemoryLimit for the worker (bytes; 0 for
	// none).
	MemoryLimit int64
	// Stderr is the tail of what the worker wrote to stderr: its last lines
	// (at most 20 lines, 4 KiB), newline-separated.
	Stderr string
	// Crash is the headline of the Go runtime's crash report ("panic: ...",
	// "fatal error: ...", with the "[signal ...]" line that may follow),
	// kept even when it scrolled out of Stderr; "" if none. It is taken
	// only from a headline followed by a goroutine trace, in a worker that
	// exited with status 2 or was killed by a signal: a task that prints
	// such a line does not make a crash of its exit (a task that forges the
	// whole report and the status still can). At GOTRACEBACK=none the
	// runtime prints no trace, and Crash stays "" (Stderr has the headline).
	Crash string
	// Err is an error from waiting for the process when it gave no status
	// (rare); nil otherwise.
	Err error
}

// Success reports whether the worker exited with status 0 by itself.
func (e *Exit) Success() bool {
	return e.Code == 0 && e.Signal == 0 && e.Killed == NotKilled && e.Err == nil
}

func (e *Exit) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cancel: worker %d (pid %d) ", e.ID, e.PID)
	switch {
	case e.Killed == KilledByMemoryLimit:
		fmt.Fprintf(&b, "exceeded memory limit %s (rss %s) and was killed", formatBytes(e.MemoryLimit), formatBytes(e.RSS))
	case e.Killed != NotKilled && e.Signal == syscall.SIGKILL:
		fmt.Fprintf(&b, "was killed by its supervisor (%s)", e.Killed)
	case e.Signal != 0:
		fmt.Fprintf(&b, "was killed by signal %s", signalName(e.Signal))
	case e.Err != nil:
		fmt.Fprintf(&b, "ended with an unknown status: %v", e.Err)
	default:
		fmt.Fprintf(&b, "exited with status %d", e.Code)
	}
	if e.Crash != "" && !strings.Contains(e.Stderr, e.Crash) {
		b.WriteString("; ")
		b.WriteString(e.Crash)
	}
	if e.Stderr != "" {
		b.WriteString("; stderr: ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

// Unwrap returns the wait error, if any.
func (e *Exit) Unwrap() error { return e.Err }

// formatBytes prints n in the largest binary unit that keeps it readable.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		if n%(1<<20) == 0 {
			return fmt.Sprintf("%d MiB", n>>20)
		}
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
