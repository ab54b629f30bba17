//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/offloadgo/offload/cancel"
)

// Process supervises one worker process: it owns the process, its channel
// and its output. Get one from Start; the zero value is not usable. All
// methods are safe for concurrent use. Reaping happens in the background:
// nobody has to wait for it, and Done tells when it has happened.
// Call Close once done with it, also after Done: it releases the channel.
type Process struct {
	spec  Spec
	cmd   *exec.Cmd
	conn  *Conn
	hello Hello
	log   *slog.Logger

	stdout, stderr *output
	outputs        chan struct{} // one value per output copier that ended
	outFiles       [2]*os.File   // read ends, closed by the copiers or the reaper
	lifeline       *os.File      // held open while the worker lives, where the platform needs it; closed by the reaper

	killed    atomic.Int32 // cancel.KillReason, the first one wins
	killedRSS atomic.Int64

	done      chan struct{} // closed once reaped and exit is set
	exit      *cancel.Exit
	closeOnce sync.Once
}

// outputDrain is how long the reaper waits, after the process exited, for
// its output to reach EOF. The worker's process group is killed first, so
// only a descendant that left the group can hold the pipes that long; then
// they are closed on it, and outputCutMessage is logged.
const outputDrain = 200 * time.Millisecond

const outputCutMessage = "workerproc: worker output still open after it exited (held by a process outside its group); closing it"

// Start starts a worker process as s describes and waits for its hello. It
// blocks until the worker has sent its hello, ctx ends, s.StartTimeout
// passes or the worker dies; on any failure the worker is killed and reaped
// and nothing is left behind. The error wraps ctx.Err(), ErrStartTimeout,
// ErrProtocol (bad or mismatched hello) or the *cancel.Exit of a worker that died
// first (whose message carries its stderr tail).
//
// ctx bounds only the start: cancelling it later does not affect the
// running process.
//
// The worker runs in a process group of its own, which is killed (SIGKILL)
// whenever the worker ends, before it is reaped: see the package doc for
// what that covers. Being in its own group, the worker does not get the
// signals a terminal sends the supervisor's group (Ctrl-C): it ends when
// the supervisor closes it or dies. On Linux the worker gets SIGTERM when
// the supervisor dies (Pdeathsig), and Attach turns that into a SIGKILL of
// its group. Linux sends it when the thread that called Start ends, and Go
// ends a thread only under a goroutine that exits while locked to it with
// runtime.LockOSThread, so do not call Start from such a goroutine.
// Elsewhere the worker watches a pipe whose other end only the supervisor
// holds, and Attach kills its group when that pipe reaches EOF.
func Start(ctx context.Context, s Spec) (*Process, error) {
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := spawn(s)
	if err != nil {
		return nil, err
	}
	if err := p.handshake(ctx); err != nil {
		p.kill(cancel.KilledByStart)
		p.conn.Close()
		<-p.done
		return nil, fmt.Errorf("workerproc: start worker %d: %w", s.ID, err)
	}
	return p, nil
}

// spawn starts the process and its background goroutines.
func spawn(s Spec) (*Process, error) {
	ch, err := newChannel()
	if err != nil {
		return nil, err
	}
	if s.Plain {
		ch = ch.withoutBulk()
	}
	conn, err := newConn(ch.parent, s.MaxFrame)
	if err != nil {
		closeFDs(ch.child)
		return nil, err
	}
	child := make([]*os.File, len(ch.child))
	for i, fd := range ch.child {
		child[i] = os.NewFile(uintptr(fd), "offload-worker-channel")
	}
	defer closeFiles(child...)
	r, w, err := outputPipes()
	if err != nil {
		conn.Close()
		return nil, err
	}
	cmd := s.command(child, w[0], w[1])
	// The platform's way for the worker to die with its supervisor
	// (parentdeath_*.go).
	lifeline, give, err := dieWithParent(cmd)
	if err != nil {
		conn.Close()
		closeFiles(r[:]...)
		closeFiles(w[:]...)
		return nil, err
	}
	err = cmd.Start()
	closeFiles(w[:]...)
	closeFiles(give)
	if err != nil {
		conn.Close()
		closeFiles(r[:]...)
		closeFiles(lifeline)
		return nil, fmt.Errorf("workerproc: start worker %d: %w", s.ID, err)
	}
	pid := cmd.Process.Pid
	log := s.Logger.With(slog.Int("worker", s.ID), slog.Int("pid", pid))
	p := &Process{
		spec:     s,
		cmd:      cmd,
		conn:     conn,
		log:      log,
		stdout:   &output{logger: log, stream: "stdout"},
		stderr:   &output{logger: log, stream: "stderr"},
		outputs:  make(chan struct{}, 2),
		outFiles: r,
		lifeline: lifeline,
		done:     make(chan struct{}),
	}
	go p.copyOutput(p.stdout, r[0])
	go p.copyOutput(p.stderr, r[1])
	go p.reap()
	if s.MemoryLimit > 0 {
		go p.watchMemory()
	}
	return p, nil
}

// outputPipes makes the pipes of a worker's stdout and stderr: the
// supervisor reads r, the worker writes w.
func outputPipes() (r, w [2]*os.File, err error) {
	for i := range r {
		if r[i], w[i], err = os.Pipe(); err != nil {
			closeFiles(r[:i]...)
			closeFiles(w[:i]...)
			return r, w, fmt.Errorf("workerproc: pipe: %w", err)
		}
	}
	return r, w, nil
}

// command is the worker's command, with the channel's descriptors as its
// extra files and its output to stdout and stderr; dieWithParent then
// gives it a process group of its own and the platform's parent death.
func (s Spec) command(channel []*os.File, stdout, stderr *os.File) *exec.Cmd {
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Env = s.environ(os.Getpid())
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = channel
	return cmd
}

func (p *Process) copyOutput(o *output, f *os.File) {
	o.copy(f)
	f.Close()
	p.outputs <- struct{}{}
}

// handshake waits for the hello frame.
func (p *Process) handshake(ctx context.Context) error {
	type result struct {
		f   Frame
		err error
	}
	got := make(chan result, 1)
	go func() {
		f, err := p.conn.ReadFrame()
		got <- result{f, err}
	}()
	timer := time.NewTimer(p.spec.StartTimeout)
	defer timer.Stop()
	var err error
	select {
	case r := <-got:
		if r.err == nil {
			p.hello, err = parseHello(r.f, p.PID(), p.spec.Protocol)
			return err
		}
		if errors.Is(r.err, ErrClosed) || errors.Is(r.err, ErrFrameTooLarge) || errors.Is(r.err, ErrCorruptFrame) {
			return fmt.Errorf("%w: reading hello: %w", ErrProtocol, r.err)
		}
		// The channel ended: the worker died, or is not a worker at all.
		select {
		case <-p.done:
			return p.exit
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return fmt.Errorf("%w: worker closed its channel without a hello", ErrProtocol)
		}
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("%w (%v)", ErrStartTimeout, p.spec.StartTimeout)
	}
	p.conn.Close() // unblocks the reader
	<-got
	return err
}

// reap waits for the process to exit, kills its process group, reaps it,
// waits for its output, and publishes the Exit.
func (p *Process) reap() {
	// Between the exit and the reap the zombie holds its pid, which is the
	// group's id: the group kill cannot reach a group that reused the id.
	if err := waitExited(p.PID()); err == nil {
		p.killGroup()
	} else {
		p.log.Warn("workerproc: cannot wait for the worker without reaping it; its process group is left alone", "err", err)
	}
	werr := p.cmd.Wait()
	closeFiles(p.lifeline)
	timer := time.NewTimer(outputDrain)
	defer timer.Stop()
	for ended := 0; ended < 2; {
		select {
		case <-p.outputs:
			ended++
		case <-timer.C:
			p.log.Warn(outputCutMessage)
			closeFiles(p.outFiles[:]...) // copiers end on the closed files
		}
	}
	p.exit = p.account(werr)
	close(p.done)
}

func (p *Process) account(werr error) *cancel.Exit {
	e := &cancel.Exit{
		ID:          p.spec.ID,
		PID:         p.PID(),
		Code:        -1,
		Killed:      cancel.KillReason(p.killed.Load()),
		RSS:         p.killedRSS.Load(),
		MemoryLimit: p.spec.MemoryLimit,
		Stderr:      p.stderr.lines(),
	}
	st := p.cmd.ProcessState
	if st == nil {
		e.Err = werr
		return e
	}
	e.Code = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
	}
	// The runtime ends a crash with status 2, or by a signal (SIGABRT at
	// GOTRACEBACK=crash); a headline otherwise is only what a task printed.
	if e.Code == 2 || e.Signal != 0 {
		e.Crash = p.stderr.crashLine()
	}
	if e.Signal != syscall.SIGKILL {
		// The worker ended on its own before the kill landed.
		e.Killed, e.RSS = cancel.NotKilled, 0
	}
	return e
}

// kill sends SIGKILL, recording why unless a reason was already recorded.
func (p *Process) kill(why cancel.KillReason) {
	select {
	case <-p.done:
		return
	default:
	}
	p.killed.CompareAndSwap(int32(cancel.NotKilled), int32(why))
	// After the reap this is a no-op: os.Process holds a pidfd, so the
	// signal can never reach another process that reused the pid.
	p.cmd.Process.Kill()
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
