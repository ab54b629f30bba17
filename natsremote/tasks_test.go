package natsremote_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

type tallyIn struct {
	Key string
	D   time.Duration
}

type announceIn struct {
	Tag string
	D   time.Duration
}

// Tasks of the tests. The node processes are this binary, so they have
// them too.
var (
	add = pool.Register("nr.add", func(_ context.Context, in [2]int) (int, error) {
		return in[0] + in[1], nil
	})
	pid = pool.Register("nr.pid", func(context.Context, struct{}) (int, error) {
		return os.Getpid(), nil
	})
	fail = pool.Register("nr.fail", func(_ context.Context, msg string) (int, error) {
		return 0, errors.New(msg)
	})
	boom = pool.Register("nr.panic", func(_ context.Context, msg string) (int, error) {
		panic(msg)
	})
	// failLong and boomLong fail with, or panic with, a text of n bytes.
	failLong = pool.Register("nr.fail-long", func(_ context.Context, n int) (int, error) {
		return 0, errors.New(strings.Repeat("x", n))
	})
	boomLong = pool.Register("nr.panic-long", func(_ context.Context, n int) (int, error) {
		panic(strings.Repeat("y", n))
	})
	// announce says on stdout that it started, with its tag (a node
	// process's output is the test's), then sleeps d or until its ctx
	// ends.
	announce = pool.Register("nr.announce", func(ctx context.Context, in announceIn) (int, error) {
		fmt.Printf("nr.announce started %s\n", in.Tag)
		select {
		case <-time.After(in.D):
			return 1, nil
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	})
	// stubborn sleeps d whatever its ctx does.
	stubborn = pool.Register("nr.stubborn", func(_ context.Context, d time.Duration) (int, error) {
		time.Sleep(d)
		return 1, nil
	})
	// tallySleep counts its runs by key (see runsOf), then sleeps d or
	// until its ctx ends.
	tallySleep = pool.Register("nr.tally-sleep", func(ctx context.Context, in tallyIn) (string, error) {
		n, _ := tallies.LoadOrStore(in.Key, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		select {
		case <-time.After(in.D):
			return in.Key + "!", nil
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	})
	// sleep sleeps d, or until its ctx ends.
	sleep = pool.Register("nr.sleep", func(ctx context.Context, d time.Duration) (int, error) {
		select {
		case <-time.After(d):
			return 1, nil
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	})
	// hold counts its runs under key, then blocks until the test
	// releases key (in process only) or its ctx ends.
	hold = pool.Register("nr.hold", func(ctx context.Context, key string) (string, error) {
		g := gateFor(key)
		g.runs.Add(1)
		g.started <- struct{}{}
		select {
		case <-g.release:
			return key, nil
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	})
	echoBuffer = pool.Register("nr.echo-buffer", func(_ context.Context, b *transfer.Buffer) (*transfer.Buffer, error) {
		out := transfer.Move(append([]byte("echo: "), b.Bytes()...))
		b.Release()
		return out, nil
	})
	bytesOut = pool.Register("nr.bytes", func(_ context.Context, n int) ([]byte, error) {
		return make([]byte, n), nil
	})
	length = pool.Register("nr.len", func(_ context.Context, b []byte) (int, error) {
		return len(b), nil
	})
)

// gate is a hold task's key's books, in process.
type gate struct {
	runs    countRuns
	started chan struct{}
	release chan struct{}
}

type countRuns struct {
	mu sync.Mutex
	n  int
}

func (c *countRuns) Add(d int) {
	c.mu.Lock()
	c.n += d
	c.mu.Unlock()
}

func (c *countRuns) Load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

var gates sync.Map // key → *gate

// runs numbers the tests' runs, so that each run's hold keys are its own
// (with -count, a test runs again in the same process).
var runs atomic.Int64

// keysFor returns a maker of hold keys for one run of a test.
func keysFor(prefix string) func(name string) string {
	run := runs.Add(1)
	return func(name string) string { return fmt.Sprintf("%s#%d/%s", prefix, run, name) }
}

func gateFor(key string) *gate {
	g, _ := gates.LoadOrStore(key, &gate{started: make(chan struct{}, 1000), release: make(chan struct{})})
	return g.(*gate)
}
