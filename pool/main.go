package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offloadgo/offload/cancel"
	"github.com/offloadgo/offload/transfer"
)

// Main makes the program a worker for Subprocess pools. Call it first thing
// in main, and in TestMain for tests that use Subprocess pools:
//
//	func main() {
//		pool.Main()
//		...
//	}
//
// In a process started as a pool's worker, Main serves the registered
// tasks and never returns: the process exits when its pool closes the
// channel or dies. In any other process it returns at once, having done
// nothing but read an environment variable. A worker that cannot reach its
// pool prints why to stderr and exits with status 2.
func Main() {
	conn, worker, err := cancel.Attach()
	if !worker {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker:", err)
		os.Exit(2)
	}
	os.Exit(serve(conn))
}

// serve sends the hello, then runs the calls conn brings until it reaches
// EOF, and returns the process's exit status. It returns at once at EOF,
// without waiting for tasks still running: the pool has gone.
func serve(conn *cancel.Conn) int {
	if err := conn.SendHello(cancel.Hello{Tasks: registeredNames()}); err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker:", err)
		return 2
	}
	s := &server{conn: conn, running: map[uint64]context.CancelFunc{}, maxOutput: conn.MaxFrame() - frameSlack,
		exit: make(chan int, 1), link: newPeerLink(conn.MaxFrame())}
	s.read()
	return <-s.exit
}

// server is a worker process's state: the tasks running, by call ID. The
// pool sends one call at a time, but a second is served beside the first.
type server struct {
	conn      *cancel.Conn
	maxOutput int
	// link moves Buffers to and from the pool. Its Peer is never closed:
	// the process exits when the connection ends.
	link *peerLink
	// sizes guesses the size of each task's output, to size its reply.
	sizes sizeHints

	exit chan int // the reader's verdict at the channel's end

	mu      sync.Mutex
	running map[uint64]context.CancelFunc
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
			s.reply(cancel.Frame{Kind: kindError, ID: f.ID, Body: fmt.Appendf(nil, "pool: worker: bad call frame: %v", err)}, nil, true)
			continue
		}
		switch kind {
		case kindCall:
			// Registered before the next reader starts, which may read
			// this call's cancel frame.
			ctx, stop := context.WithCancel(context.Background())
			s.mu.Lock()
			s.running[f.ID] = stop
			s.mu.Unlock()
			// Whoever takes handed first reads on: this goroutine if the
			// call is done within readerDelay, else a new reader started
			// then for cancel frames (or a second call) meanwhile.
			var handed atomic.Bool
			t := time.AfterFunc(readerDelay, func() {
				if handed.CompareAndSwap(false, true) {
					s.read()
				}
			})
			s.call(ctx, stop, f.ID, body, moved)
			if !handed.CompareAndSwap(false, true) {
				return // the reader started by t reads on
			}
			t.Stop()
		case kindCancel:
			s.cancel(f.ID)
		default:
			fmt.Fprintf(os.Stderr, "pool: worker: ignoring a frame of unknown kind %d\n", kind)
		}
	}
}

// call runs call id on body and sends its reply. A moved input is decoded
// with the Peer.
func (s *server) call(ctx context.Context, stop context.CancelFunc, id uint64, body []byte, moved bool) {
	out := s.run(ctx, body, moved)
	s.mu.Lock()
	delete(s.running, id)
	s.mu.Unlock()
	stop()
	s.reply(cancel.Frame{Kind: out.kind, ID: id, Body: out.body}, out.segs, out.broken)
}

// reply sends f with the segments it needs and the releases due.
func (s *server) reply(f cancel.Frame, segs []transfer.Segment, broken bool) {
	if err := s.link.seal(&f, segs, broken, false); err != nil {
		// The output's Buffers are lent but can't be sent: report it, and
		// have the pool retire this process.
		f = cancel.Frame{Kind: kindError, ID: f.ID, Body: []byte("pool: worker: output: " + err.Error())}
		_ = s.link.seal(&f, nil, true, false)
	}
	if err := s.conn.WriteFrame(f); err != nil {
		fmt.Fprintln(os.Stderr, "pool: worker: reply:", err)
	}
}

func (s *server) cancel(id uint64) {
	s.mu.Lock()
	stop := s.running[id]
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// output is a call's reply before it is sealed: kind and body, the
// segments the output references, and whether Buffers were lent that the
// reply does not carry (see moves.broken).
type output struct {
	kind   byte
	body   []byte
	segs   []transfer.Segment
	broken bool
}

func failed(kind byte, body []byte) output { return output{kind: kind, body: body} }

// run runs one call and returns its reply. Once the output is encoded
// (its Buffers moved to the pool), the input's Buffers that the task kept
// are released, so their releases go back on this very reply.
func (s *server) run(ctx context.Context, body []byte, moved bool) output {
	name, input, err := parseCall(body)
	if err != nil {
		return failed(kindError, []byte(err.Error()))
	}
	registry.RLock()
	e, ok := registry.tasks[name]
	registry.RUnlock()
	if !ok {
		return failed(kindUnknown, fmt.Appendf(nil, "%q is not registered in worker pid %d; register tasks at package level", name, os.Getpid()))
	}
	var peer *transfer.Peer
	if moved {
		peer = s.link.peer
	}
	out, in, err, panicked := invokeEntry(ctx, e, input, peer)
	defer transfer.ReleaseAll(in)
	if panicked != nil || err != nil {
		transfer.ReleaseAll(out) // a failed task's output goes nowhere
	}
	switch {
	case panicked != nil:
		return failed(kindPanic, panicBody(panicked.value, panicked.stack))
	case err != nil && moved && in == nil:
		// The input did not decode: references past the failure were
		// never read, so the pool would keep them lent. Retired, the
		// process gives them all back at once.
		return output{kind: kindError, body: []byte(err.Error()), broken: true}
	case err != nil:
		return failed(kindError, []byte(err.Error()))
	}
	// Sized, but not reused once written as the parent's call bodies are:
	// measured on bench/orders' echo-json (44 MB back), reusing them here
	// made the round trip slower, not faster.
	buf := bytes.NewBuffer(make([]byte, 0, s.sizes.guess(name, out)))
	segs, err := peerEncodeInto(buf, s.link.peer, out)
	if err != nil {
		transfer.ReleaseAll(out) // nothing moved: the output's Buffers are freed here
		return failed(kindError, fmt.Appendf(nil, "pool: encode output of task %q: %v", name, err))
	}
	if n := buf.Len(); n > s.maxOutput {
		// If it held Buffers (they are detached now), they were lent for
		// a reply that can't be sent.
		return output{kind: kindTooLarge, body: fmt.Appendf(nil, "output of task %q is %d bytes, over MaxPayload %d", name, n, s.maxOutput),
			broken: errors.Is(transfer.Check(out), transfer.ErrDetached)}
	}
	s.sizes.record(name, buf.Len())
	return output{kind: kindResult, body: buf.Bytes(), segs: segs}
}

type recovered struct {
	value string
	stack []byte
}

// invokeEntry runs a registered task on its encoded input, recovering a
// panic on the task's own goroutine (one on a goroutine the task started
// can't be recovered: it ends the process, which the pool reports). With
// a Peer the input is decoded by it, its references becoming Buffers; in
// is the decoded input, for the caller to release what the task kept, or
// nil if it did not decode.
func invokeEntry(ctx context.Context, e entry, input []byte, peer *transfer.Peer) (out, in any, err error, p *recovered) {
	defer func() {
		if v := recover(); v != nil {
			p = &recovered{value: fmt.Sprint(v), stack: debug.Stack()}
		}
	}()
	out, err = e.invoke(ctx, func(ptr any) error {
		in = ptr
		var err error
		if peer != nil {
			err = peerUnmarshal(peer, input, ptr)
		} else {
			err = unmarshal(input, ptr)
		}
		if err != nil {
			in = nil // Decode released what it resolved
			return fmt.Errorf("pool: decode input of task %q: %w", e.name, err)
		}
		return nil
	})
	return out, in, err, nil
}
