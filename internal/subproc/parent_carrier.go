package subproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/offloadgo/offload/internal/workerproc"
)

// Options configure a ProcessCarrier: the pool's SubprocessOptions (defaults
// filled in) and its logger.
type Options struct {
	TerminateGrace    time.Duration
	MaxTasksPerWorker int
	MemoryLimit       int64
	MaxPayload        int // > 0
	StartTimeout      time.Duration
	// GOMAXPROCS of each worker process: > 0 sets it; 0 means
	// defaultMaxProcs unless the pool's environment sets GOMAXPROCS;
	// runtimeMaxProcs leaves the Go runtime's default.
	GOMAXPROCS int
	// Nice is added to each worker process's nice value (0..MaxNice).
	Nice   int
	Logger *slog.Logger // not nil
	// Command, when set, is the program to run as worker instead of this
	// binary, with its arguments: a program of another language that
	// speaks the program dialect (sdk/PROTOCOL.md). GOMAXPROCS does not
	// apply to it.
	Command []string
	// Dir is the Command's working directory; "" means the pool's.
	Dir string
	// Env is added to the environment the Command inherits.
	Env []string
}

// Limits of Options.MaxPayload.
const (
	// DefaultMaxPayload is the pool's default MaxPayload: 64 MiB.
	DefaultMaxPayload = workerproc.DefaultMaxFrame
	// MaxPayloadLimit is the largest MaxPayload: the channel's frame
	// limit, less room for a call's header.
	MaxPayloadLimit = workerproc.MaxFrameLimit - frameSlack
)

// ProcessCarrier is the transport of a Subprocess pool: worker processes that
// are copies of the program itself (see Serve for their side), one per
// worker goroutine, run by a runner each; and the msgpack codec of inputs
// and outputs. Safe for concurrent use.
type ProcessCarrier struct {
	stop       context.Context // the pool's: ends with it
	events     seam.Events
	spec       workerproc.Spec // ID is set per worker
	maxPayload int
	grace      int64 // TerminateGrace in nanoseconds
	maxTasks   int
	// program says the workers are a program of another language, which
	// speaks the program dialect (parent_program.go); nice is then
	// applied from here, since no Main of ours runs in it.
	program bool
	command string // the program's command line, for errors
	nice    int
	sizes   codec.SizeHints // of inputs, to size call bodies
	bodies  codec.Bodies    // call bodies written, for reuse
	starts  *startBackoff   // the runners' starts after failed ones
	probing                 // a program's tasks (parent_programtasks.go)
}

// errNotMain is New's answer in a worker process whose main did not call
// Main first: starting workers from there would re-exec without end.
var errNotMain = errors.New("pool: this process is a worker process (" + workerproc.EnvWorker +
	" is set) but it did not call pool.Main first thing in main (and TestMain); " +
	"refusing to start more worker processes")

// New returns the transport of a pool whose stop context is stop, which
// reports to ev. It fails in a worker process (see errNotMain), on
// platforms without worker processes (see PlatformSupport), and with a
// MemoryLimit where it can't be enforced (see MemoryLimitSupport).
func New(o Options, stop context.Context, ev seam.Events) (*ProcessCarrier, error) {
	if os.Getenv(workerproc.EnvWorker) != "" {
		return nil, errNotMain
	}
	if err := PlatformSupport(runtime.GOOS); err != nil {
		return nil, err
	}
	if o.MemoryLimit > 0 {
		if err := MemoryLimitSupport(runtime.GOOS); err != nil {
			return nil, err
		}
	}
	sp := &ProcessCarrier{
		stop:   stop,
		events: ev,
		spec: workerproc.Spec{
			Logger:       o.Logger,
			MaxFrame:     o.MaxPayload + frameSlack,
			MemoryLimit:  o.MemoryLimit,
			StartTimeout: o.StartTimeout,
			Env:          append(maxProcsEnv(o.GOMAXPROCS), niceEnv(o.Nice)...),
		},
		maxPayload: o.MaxPayload,
		grace:      int64(o.TerminateGrace),
		maxTasks:   o.MaxTasksPerWorker,
	}
	sp.starts = newStartBackoff(sp.startFailed)
	if len(o.Command) > 0 {
		sp.program, sp.nice = true, o.Nice
		sp.command = strings.Join(o.Command, " ")
		sp.spec.Path, sp.spec.Args = o.Command[0], o.Command[1:]
		sp.spec.Dir, sp.spec.Env = o.Dir, o.Env
		sp.spec.Protocol, sp.spec.Plain = ProgramVersion, true
	}
	return sp, nil
}

// Encode returns the payload of a call for the worker process: the whole
// body of its frame. An input that can hold Buffers is only checked: it
// is encoded at send time with the Peer of the process it goes to. A
// program's input is JSON whatever form says: a pool of a program takes
// no other task (package pool refuses them first).
func (sp *ProcessCarrier) Encode(task string, trace []byte, in any, form seam.Form) ([]byte, error) {
	if sp.program {
		return sp.encodeProgram(task, trace, in)
	}
	if form == seam.Moves {
		return nil, sp.check(task, trace, in)
	}
	return sp.encode(task, trace, in)
}

// NewRunner returns the runner of worker goroutine id.
func (sp *ProcessCarrier) NewRunner(id int) seam.Runner {
	return &runner{sp: sp, id: id, stop: sp.stop, events: sp.events}
}

// encode returns the whole body of the call frame: the header with the
// trace context and the task's name, then the input's msgpack, so that
// exchange sends it as it is (and recycles it once written).
func (sp *ProcessCarrier) encode(task string, trace []byte, in any) (body []byte, err error) {
	head, err := sp.newCallBody(task, trace, in)
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(head) // the input's msgpack goes after the header
	if err := codec.MarshalInto(buf, in); err != nil {
		sp.bodies.Recycle(buf.Bytes())
		return nil, fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	if err := sp.checkSize(task, buf.Len()-len(head)); err != nil {
		sp.bodies.Recycle(buf.Bytes())
		return nil, err
	}
	return buf.Bytes(), nil
}

// newCallBody returns a call body holding the header (trace context and
// task name), with room for in's msgpack as sizes guesses it.
func (sp *ProcessCarrier) newCallBody(task string, trace []byte, in any) ([]byte, error) {
	if err := checkCallHeader(task, trace); err != nil {
		return nil, err
	}
	return appendCallHeader(sp.bodies.Get(callHeaderLen(task, trace)+sp.sizes.Guess(task, in)), task, trace)
}

// checkSize refuses an input of n bytes over MaxPayload, and notes the
// size of one that will be sent.
func (sp *ProcessCarrier) checkSize(task string, n int) error {
	if n > sp.maxPayload {
		return fmt.Errorf("%w: input of task %q is %d bytes, over MaxPayload %d", seam.ErrPayloadTooLarge, task, n, sp.maxPayload)
	}
	sp.sizes.Record(task, n)
	return nil
}

// check is Encode's work for an input that can hold Buffers: everything
// encode would refuse, but for the size, which only the Peer's encoding
// knows (a moved Buffer costs its 29-byte reference, not its length).
func (sp *ProcessCarrier) check(task string, trace []byte, in any) error {
	if err := checkCallHeader(task, trace); err != nil {
		return err
	}
	if err := shmbuf.Check(in); err != nil {
		return fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	return nil
}

// encodeMoving is encode at send time, with the Peer of the process the
// call goes to: it returns the call body and the segments whose
// descriptors must go with it. An error means nothing moved, but for an
// input over MaxPayload or nested too deep (codec.ErrTooDeep), which is
// reported only after its Buffers were moved, with committed set if there
// were any: the connection is broken then (see moves.broken).
func (sp *ProcessCarrier) encodeMoving(peer shmbuf.Peer, task string, trace []byte, in any) (body []byte, segs []shmbuf.Segment, committed bool, err error) {
	head, err := sp.newCallBody(task, trace, in)
	if err != nil {
		return nil, nil, false, err
	}
	buf := bytes.NewBuffer(head)
	if segs, err = codec.PeerEncodeInto(buf, peer, in); err != nil {
		sp.bodies.Recycle(buf.Bytes())
		// Nothing moved, but for an input found too deep once encoded,
		// as for one too large below.
		committed = errors.Is(err, codec.ErrTooDeep) && errors.Is(shmbuf.Check(in), shmbuf.ErrDetached)
		return nil, nil, committed, fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	if err := sp.checkSize(task, buf.Len()-len(head)); err != nil {
		sp.bodies.Recycle(buf.Bytes())
		// The Buffers in it (detached now) were lent for nothing.
		committed = errors.Is(shmbuf.Check(in), shmbuf.ErrDetached)
		return nil, nil, committed, err
	}
	return buf.Bytes(), segs, false, nil
}

// decode reads a task's output; with a Peer, the Buffers in it become the
// caller's.
func (sp *ProcessCarrier) decode(task string, data []byte, out any, peer shmbuf.Peer) error {
	if err := codec.PeerUnmarshal(peer, data, out); err != nil {
		return fmt.Errorf("pool: decode output of task %q: %w", task, err)
	}
	return nil
}
