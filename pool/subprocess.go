package pool

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"

	"github.com/offloadgo/offload/internal/xfer"

	"github.com/offloadgo/offload/internal/workerproc"

	"github.com/offloadgo/offload/transfer"
)

// RemoteError is the error a task returned in a worker process. Errors
// don't cross a process boundary, so errors.Is can't match the worker's
// sentinels; Message is the original error's text, and Error returns it
// unchanged.
type RemoteError struct {
	Task    string // the registered name of the task
	Message string // the task's err.Error()
}

func (e *RemoteError) Error() string { return e.Message }

// subprocess is the remote of a Subprocess pool: the msgpack codec, and
// the spec each worker process is started from.
type subprocess struct {
	stop       context.Context // the pool's: ends with it
	events     events
	spec       workerproc.Spec // ID is set per worker
	maxPayload int
	grace      int64 // SubprocessOptions.TerminateGrace in nanoseconds
	maxTasks   int
	sizes      sizeHints // of inputs, to size call bodies
	bodies     bodies    // call bodies written, for reuse
}

// errNotMain is New's answer in a worker process whose main did not call
// Main first: starting workers from there would re-exec without end.
var errNotMain = errors.New("pool: this process is a worker process (" + workerproc.EnvWorker +
	" is set) but it did not call pool.Main first thing in main (and TestMain); " +
	"refusing to start more worker processes")

func newSubprocess(s settings, stop context.Context, ev events) (*subprocess, error) {
	if os.Getenv(workerproc.EnvWorker) != "" {
		return nil, errNotMain
	}
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("pool: Isolation Subprocess: %w", workerproc.ErrUnsupported)
	}
	o := s.Subprocess
	logger := s.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &subprocess{
		stop:   stop,
		events: ev,
		spec: workerproc.Spec{
			Logger:       logger,
			MaxFrame:     o.MaxPayload + frameSlack,
			MemoryLimit:  o.MemoryLimit,
			StartTimeout: o.StartTimeout,
		},
		maxPayload: o.MaxPayload,
		grace:      int64(o.TerminateGrace),
		maxTasks:   o.MaxTasksPerWorker,
	}, nil
}

// encode returns the whole body of the call frame: the header naming the
// task, then the input's msgpack, so that exchange sends it as it is (and
// recycles it once written).
func (sp *subprocess) encode(task string, in any) (body []byte, err error) {
	head, err := sp.newCallBody(task, in)
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(head) // the input's msgpack goes after the header
	if err := marshalInto(buf, in); err != nil {
		sp.bodies.recycle(buf.Bytes())
		return nil, fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	if err := sp.checkSize(task, buf.Len()-len(head)); err != nil {
		sp.bodies.recycle(buf.Bytes())
		return nil, err
	}
	return buf.Bytes(), nil
}

// newCallBody returns a call body holding the header naming task, with
// room for in's msgpack as sizes guesses it.
func (sp *subprocess) newCallBody(task string, in any) ([]byte, error) {
	if len(task) > maxNameLen {
		return appendCallHeader(nil, task) // its error
	}
	return appendCallHeader(sp.bodies.get(binary.MaxVarintLen64+len(task)+sp.sizes.guess(task, in)), task)
}

// checkSize refuses an input of n bytes over MaxPayload, and notes the
// size of one that will be sent.
func (sp *subprocess) checkSize(task string, n int) error {
	if n > sp.maxPayload {
		return fmt.Errorf("%w: input of task %q is %d bytes, over MaxPayload %d", ErrPayloadTooLarge, task, n, sp.maxPayload)
	}
	sp.sizes.record(task, n)
	return nil
}

// check is prepare's work for an input that can hold Buffers: everything
// encode would refuse, but for the size, which only the Peer's encoding
// knows (a moved Buffer costs its 29-byte reference, not its length).
func (sp *subprocess) check(task string, in any) error {
	if _, err := appendCallHeader(nil, task); err != nil {
		return err
	}
	if err := xfer.Check(in); err != nil {
		return fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	return nil
}

// encodeMoving is encode at send time, with the Peer of the process the
// call goes to: it returns the call body and the segments whose
// descriptors must go with it. An error means nothing moved. An input over
// MaxPayload is reported only after its Buffers were moved, with
// committed set if there were any: the connection is broken then (see
// moves.broken).
func (sp *subprocess) encodeMoving(peer xfer.Peer, task string, in any) (body []byte, segs []xfer.Segment, committed bool, err error) {
	head, err := sp.newCallBody(task, in)
	if err != nil {
		return nil, nil, false, err
	}
	buf := bytes.NewBuffer(head)
	if segs, err = peerEncodeInto(buf, peer, in); err != nil {
		sp.bodies.recycle(buf.Bytes())
		return nil, nil, false, fmt.Errorf("pool: encode input of task %q: %w", task, err)
	}
	if err := sp.checkSize(task, buf.Len()-len(head)); err != nil {
		sp.bodies.recycle(buf.Bytes())
		// The Buffers in it (detached now) were lent for nothing.
		committed = errors.Is(xfer.Check(in), transfer.ErrDetached)
		return nil, nil, committed, err
	}
	return buf.Bytes(), segs, false, nil
}

// decode reads a task's output; with a Peer, the Buffers in it become the
// caller's.
func (sp *subprocess) decode(task string, data []byte, out any, peer xfer.Peer) error {
	var err error
	if peer != nil {
		err = peerUnmarshal(peer, data, out)
	} else {
		err = unmarshal(data, out)
	}
	if err != nil {
		return fmt.Errorf("pool: decode output of task %q: %w", task, err)
	}
	return nil
}

func (sp *subprocess) newRunner(id int) runner {
	return &proc{sp: sp, id: id, stop: sp.stop, events: sp.events}
}
