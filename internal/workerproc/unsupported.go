//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package workerproc

import (
	"context"
	"os"
	"time"

	"github.com/offloadgo/offload/cancel"
)

// Conn is one end of a supervisor–worker channel; on this platform every
// method fails with ErrUnsupported.
type Conn struct{ max int }

// MaxFrame is the largest frame body this connection reads or writes.
func (c *Conn) MaxFrame() int { return c.max }

// ReadFrame returns ErrUnsupported.
func (c *Conn) ReadFrame() (Frame, error) { return Frame{}, ErrUnsupported }

// WriteFrame returns ErrUnsupported.
func (c *Conn) WriteFrame(Frame) error { return ErrUnsupported }

// WriteFrames returns ErrUnsupported.
func (c *Conn) WriteFrames(...Frame) error { return ErrUnsupported }

// Unread returns ErrUnsupported.
func (c *Conn) Unread() (int, error) { return 0, ErrUnsupported }

// Close returns nil.
func (c *Conn) Close() error { return nil }

func closeFDs([]int) {}

// NewPair returns ErrUnsupported.
func NewPair(maxFrame int) (*Conn, *Conn, error) { return nil, nil, ErrUnsupported }

// Attach returns (nil, false, nil), or ErrUnsupported in a process that
// was started as a worker.
func Attach() (*Conn, bool, error) {
	if os.Getenv(EnvWorker) != "1" {
		return nil, false, nil
	}
	return nil, true, ErrUnsupported
}

// Process supervises one worker process; it cannot exist on this platform.
type Process struct{}

// Start returns ErrUnsupported.
func Start(ctx context.Context, s Spec) (*Process, error) { return nil, ErrUnsupported }

// PID returns 0.
func (p *Process) PID() int { return 0 }

// ID returns 0.
func (p *Process) ID() int { return 0 }

// Hello returns the zero Hello.
func (p *Process) Hello() Hello { return Hello{} }

// Conn returns nil.
func (p *Process) Conn() *Conn { return nil }

// Done returns a closed channel.
func (p *Process) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Exit returns nil.
func (p *Process) Exit() *cancel.Exit { return nil }

// Kill does nothing.
func (p *Process) Kill() {}

// Interrupt does nothing: no worker runs here.
func (p *Process) Interrupt() {}

// Terminate calls ask and does nothing else.
func (p *Process) Terminate(grace time.Duration, ask func()) (stop func() bool) {
	if ask != nil {
		ask()
	}
	return func() bool { return false }
}

// Close returns nil.
func (p *Process) Close() error { return nil }

// RSS returns ErrUnsupported.
func (p *Process) RSS() (int64, error) { return 0, ErrUnsupported }

func memoryLimitSupport() error { return ErrUnsupported }
