package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/offloadgo/offload/cancel"
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
		exit: make(chan int, 1)}
	s.read()
	return <-s.exit
}

// server is a worker process's state: the tasks running, by call ID. The
// pool sends one call at a time, but a second is served beside the first.
type server struct {
	conn      *cancel.Conn
	maxOutput int

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
		closeFDs(f.FDs)
		switch f.Kind {
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
			s.call(ctx, stop, f)
			if !handed.CompareAndSwap(false, true) {
				return // the reader started by t reads on
			}
			t.Stop()
		case kindCancel:
			s.cancel(f.ID)
		default:
			fmt.Fprintf(os.Stderr, "pool: worker: ignoring a frame of unknown kind %d\n", f.Kind)
		}
	}
}

// call runs one call and sends its reply.
func (s *server) call(ctx context.Context, stop context.CancelFunc, f cancel.Frame) {
	kind, body := s.run(ctx, f.Body)
	s.mu.Lock()
	delete(s.running, f.ID)
	s.mu.Unlock()
	stop()
	if err := s.conn.WriteFrame(cancel.Frame{Kind: kind, ID: f.ID, Body: body}); err != nil {
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

// run runs one call and returns the reply's kind and body.
func (s *server) run(ctx context.Context, body []byte) (kind byte, reply []byte) {
	name, input, err := parseCall(body)
	if err != nil {
		return kindError, []byte(err.Error())
	}
	registry.RLock()
	e, ok := registry.tasks[name]
	registry.RUnlock()
	if !ok {
		return kindUnknown, fmt.Appendf(nil, "%q is not registered in worker pid %d; register tasks at package level", name, os.Getpid())
	}
	out, err, panicked := invokeEntry(ctx, e, input)
	switch {
	case panicked != nil:
		return kindPanic, panicBody(panicked.value, panicked.stack)
	case err != nil:
		return kindError, []byte(err.Error())
	}
	data, err := marshal(out)
	if err != nil {
		return kindError, fmt.Appendf(nil, "pool: encode output of task %q: %v", name, err)
	}
	if len(data) > s.maxOutput {
		return kindTooLarge, fmt.Appendf(nil, "output of task %q is %d bytes, over MaxPayload %d", name, len(data), s.maxOutput)
	}
	return kindResult, data
}

type recovered struct {
	value string
	stack []byte
}

// invokeEntry runs a registered task on its encoded input, recovering a
// panic on the task's own goroutine (one on a goroutine the task started
// can't be recovered: it ends the process, which the pool reports).
func invokeEntry(ctx context.Context, e entry, input []byte) (out any, err error, p *recovered) {
	defer func() {
		if v := recover(); v != nil {
			p = &recovered{value: fmt.Sprint(v), stack: debug.Stack()}
		}
	}()
	out, err = e.invoke(ctx, func(in any) error {
		if err := unmarshal(input, in); err != nil {
			return fmt.Errorf("pool: decode input of task %q: %w", e.name, err)
		}
		return nil
	})
	return out, err, nil
}

// marshal encodes a task's output, turning a panic into an error.
func marshal(v any) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack panicked: %v", r)
		}
	}()
	return msgpack.Marshal(v)
}
