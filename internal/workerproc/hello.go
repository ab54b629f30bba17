package workerproc

import (
	"encoding/json"
	"fmt"
	"os"
)

// ProtocolVersion is the version of the supervisor–worker protocol this
// package and the frames above it speak; a worker whose Hello carries
// another is refused. It changes with anything a peer of another build
// would misread: the frame layout, a call's header (which carries the
// caller's trace context before the task's name; see internal/subproc),
// the answers a worker sends (internal/subproc's kinds, a permanent error
// among them), or where bodies travel (on Linux, bodies of bulkMin bytes
// or more go on a socket of their own, descriptor 6 in the worker; see
// Conn.writeBulk).
const ProtocolVersion = 4

// Environment variables by which Start tells the worker what it is; Attach
// reads and then unsets them, so that a process the worker starts in turn
// does not mistake itself for a worker.
const (
	// EnvWorker is "1" in a worker process.
	EnvWorker = "OFFLOAD_WORKER"
	// EnvParent holds the supervisor's pid, to notice a parent that died
	// before the worker attached.
	EnvParent = "OFFLOAD_WORKER_PARENT"
	// EnvMaxFrame holds the channel's maximum frame body size.
	EnvMaxFrame = "OFFLOAD_WORKER_MAX_FRAME"
	// EnvLifeline names the descriptor of the lifeline, where the
	// platform has one (not Linux: see dieWithParent): EOF on it means
	// the supervisor died. A Go worker knows it (Attach); a program of
	// another language reads it here.
	EnvLifeline = "OFFLOAD_WORKER_LIFELINE"
)

// Hello is the worker's handshake, the first frame it sends.
type Hello struct {
	// Version is the worker's ProtocolVersion.
	Version int `json:"version"`
	// PID is the worker's process id.
	PID int `json:"pid"`
	// Tasks names the tasks the worker has registered.
	Tasks []string `json:"tasks"`
}

// maxHello bounds the handshake frame: a few thousand task names.
const maxHello = 1 << 20

// SendHello sends the handshake. A zero Version or PID is filled in with
// ProtocolVersion and the calling process's pid. A worker calls it once,
// right after Attach, before any other frame.
func (c *Conn) SendHello(h Hello) error {
	if h.Version == 0 {
		h.Version = ProtocolVersion
	}
	if h.PID == 0 {
		h.PID = os.Getpid()
	}
	body, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("workerproc: encode hello: %w", err)
	}
	if len(body) > maxHello || len(body) > c.MaxFrame() {
		return fmt.Errorf("%w: hello of %d bytes (too many task names)", ErrFrameTooLarge, len(body))
	}
	return c.WriteFrame(Frame{Kind: KindHello, Body: body})
}

// parseHello checks the handshake frame f of the worker with process id
// pid, which must speak protocol version want.
func parseHello(f Frame, pid, want int) (Hello, error) {
	var h Hello
	if len(f.FDs) > 0 {
		closeFDs(f.FDs)
		return h, fmt.Errorf("%w: hello carries file descriptors", ErrProtocol)
	}
	if f.Kind != KindHello {
		return h, fmt.Errorf("%w: first frame has kind %#x, not hello", ErrProtocol, f.Kind)
	}
	if err := json.Unmarshal(f.Body, &h); err != nil {
		return h, fmt.Errorf("%w: malformed hello: %w", ErrProtocol, err)
	}
	if h.Version != want {
		hint := ""
		if want == ProtocolVersion {
			hint = " (is the worker the same build?)"
		}
		return h, fmt.Errorf("%w: worker speaks protocol version %d, supervisor %d%s", ErrProtocol, h.Version, want, hint)
	}
	if h.PID != pid {
		return h, fmt.Errorf("%w: hello from pid %d, but the started process is pid %d", ErrProtocol, h.PID, pid)
	}
	return h, nil
}
