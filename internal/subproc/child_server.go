package subproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/offloadgo/offload/internal/workerproc"
)

// server is a worker process's side of its pool's channel: it reads call
// and cancel frames, runs each call (see child_servetask.go) and sends its
// reply. The pool sends one call at a time, but a second is served beside
// the first.
type server struct {
	conn      *workerproc.Conn
	maxOutput int
	// link moves Buffers to and from the pool. Its Peer is never closed:
	// the process exits when the connection ends.
	link *peerLink
	// sizes guesses the size of each task's output, to size its reply.
	sizes codec.SizeHints
	// taskLabels holds each task's pprof labels (prof.Labels by name).
	taskLabels sync.Map
	// extract gives a task the trace context its call carries; nil: the
	// carrier is not read.
	extract Extract

	exit chan int // the reader's verdict at the channel's end

	mu      sync.Mutex
	running map[uint64]context.CancelCauseFunc // by call ID

	// giving is held by a reply from before it writes the descriptors of
	// segments it gave away until it has closed them, and taken by each
	// call before its task starts: the pool may send the next call as soon
	// as it has the reply, and that call's task must find no descriptor of
	// a Buffer this process gave away (it could map it and write it).
	giving sync.Mutex
}

func newServer(conn *workerproc.Conn) *server {
	return &server{
		conn:      conn,
		maxOutput: conn.MaxFrame() - frameSlack,
		link:      newPeerLink(conn.MaxFrame(), shmbuf.WorkerSide),
		exit:      make(chan int, 1),
		running:   map[uint64]context.CancelCauseFunc{},
	}
}

// readerDelay is how long a call runs on the reading goroutine before a
// new reader starts beside it. Most calls end sooner, and then no reader
// is started at all: a goroutine that wakes a thread only to block it in
// a system call costs a short call's round trip several microseconds on a
// busy machine. The cost of the delay is that a cancel frame for a longer
// call is read up to readerDelay late, against a grace counted in
// milliseconds or more.
const readerDelay = time.Millisecond

// read reads frames until a call comes, then runs that call on this
// goroutine, and goes on reading once the call is done unless the reading
// was handed to a new goroutine meanwhile (see readerDelay). Running the
// call where it was read, rather than handing it to another goroutine
// while this one blocks in its next read, spares the round trip a
// scheduler hop (tens of microseconds: the hop waits for a thread stuck in
// a system call).
func (s *server) read() {
	for {
		f, err := s.conn.ReadFrame()
		if errors.Is(err, io.EOF) {
			s.exit <- 0
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pool: worker:", err)
			s.exit <- 2
			return
		}
		moved := f.Kind&kindMoves != 0       // the input was encoded by the pool's Peer
		kind, body, _, err := s.link.open(f) // the pool never sends broken: it retires the process instead
		if err != nil {
			// The pool's Buffers in this call can't be read, nor maybe in
			// the next: ask to be retired.
			s.reply(workerproc.Frame{Kind: kindError, ID: f.ID, Body: fmt.Appendf(nil, "pool: worker: bad call frame: %v", err)}, nil, true)
			continue
		}
		switch kind {
		case kindCall:
			if !s.serveCall(f.ID, body, moved) {
				return // another goroutine reads on
			}
		case kindCancel:
			s.cancel(f.ID, cancelCause(body))
		default:
			fmt.Fprintf(os.Stderr, "pool: worker: ignoring a frame of unknown kind %d\n", kind)
		}
	}
}

// serveCall runs call id on this goroutine and reports whether this
// goroutine is still the reader: if the call takes longer than
// readerDelay, a new reader starts beside it, for cancel frames (or a
// second call) meanwhile, and whoever takes handed first reads on. A task
// that calls runtime.Goexit ends this goroutine; the reading goes on in a
// new one then.
func (s *server) serveCall(id uint64, body []byte, moved bool) bool {
	// Registered before the next reader starts, which may read this
	// call's cancel frame.
	ctx, stop := context.WithCancelCause(context.Background())
	s.mu.Lock()
	s.running[id] = stop
	s.mu.Unlock()
	var handed atomic.Bool
	t := time.AfterFunc(readerDelay, func() {
		if handed.CompareAndSwap(false, true) {
			s.read()
		}
	})
	s.call(ctx, id, body, moved, func() {
		if handed.CompareAndSwap(false, true) {
			t.Stop()
			go s.read()
		}
	})
	if !handed.CompareAndSwap(false, true) {
		return false // the reader started by t reads on
	}
	t.Stop()
	return true
}

// call runs call id on body and sends its reply; goexited runs if the
// task ends the goroutine with runtime.Goexit, after the reply for that
// has gone. A moved input is decoded with the Peer.
func (s *server) call(ctx context.Context, id uint64, body []byte, moved bool, goexited func()) {
	// Wait for a reply still closing the descriptors it gave away: the
	// lock is a barrier, held by reply, not a guard of data here.
	s.giving.Lock()
	//lint:ignore SA2001 an empty critical section is the barrier
	s.giving.Unlock()
	returned := false
	defer func() {
		if !returned {
			// The input's Buffers the task held can't be found from
			// here: the reply asks the pool to retire this process,
			// which frees them.
			s.finish(id, output{Outcome: outcome.Of(outcome.Goexit, nil), broken: moved})
			goexited()
		}
	}()
	out := s.run(ctx, body, moved)
	returned = true
	s.finish(id, out)
}

// finish forgets call id and sends its reply.
func (s *server) finish(id uint64, out output) {
	s.mu.Lock()
	stop := s.running[id]
	delete(s.running, id)
	s.mu.Unlock()
	stop(nil)
	s.reply(workerproc.Frame{Kind: answerKind(out.Kind), ID: id, Body: out.Body}, out.segs, out.broken)
}

// reply sends f with the segments it needs and the releases due, then
// closes the descriptors of the segments it gave: the parent has its
// own (or, if the frame could not be sent, the memory is lost with it).
func (s *server) reply(f workerproc.Frame, segs []shmbuf.Segment, broken bool) {
	for _, seg := range segs {
		if seg.Given {
			s.giving.Lock()
			defer s.giving.Unlock()
			defer shmbuf.CloseGiven(segs)
			break
		}
	}
	if err := s.link.seal(&f, segs, broken, false); err != nil {
		// The output's Buffers left this process's books but can't be
		// sent: report it, and have the pool retire this process, which
		// frees those of the pool's it was returning.
		f = workerproc.Frame{Kind: kindError, ID: f.ID, Body: []byte("pool: worker: output: " + err.Error())}
		_ = s.link.seal(&f, nil, true, false)
	}
	if err := s.conn.WriteFrame(f); err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker: reply:", err)
	}
}

// cancel ends the ctx of call id with cause, as its caller's ended.
func (s *server) cancel(id uint64, cause error) {
	s.mu.Lock()
	stop := s.running[id]
	s.mu.Unlock()
	if stop != nil {
		stop(cause)
	}
}
