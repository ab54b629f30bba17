//go:build unix

package natsremote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// sleepPID sleeps d, or until its ctx ends, and returns the ID of the
// process that ran it.
var sleepPID = pool.Register("nr.sleep-pid", func(ctx context.Context, d time.Duration) (int, error) {
	select {
	case <-time.After(d):
		return os.Getpid(), nil
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
})

// awaitFile waits until the file at path exists (the test's word, to a
// node process), or its ctx ends, and returns the ID of the process that
// ran it.
var awaitFile = pool.Register("nr.await-file", func(ctx context.Context, path string) (int, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return os.Getpid(), nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
})

// A rolling deploy: a node process that gets SIGTERM under load, with
// its drain left at the default, finishes every call it runs — calls
// that outlast the loss bound, so that it must go on answering pings
// while it drains — takes no new one (those go to the other node), leaves
// with status 0, and the pool sees it leave, not lost: nothing fails.
func TestSIGTERMedNodeFinishesItsCalls(t *testing.T) {
	t.Parallel()
	s := startServer(t, embedded.Options{Listen: true})
	var mu sync.Mutex
	events := map[pool.WorkerEventKind]int{}
	hook := func(ev pool.WorkerEvent) {
		mu.Lock()
		events[ev.Kind]++
		mu.Unlock()
	}
	a := startNode(t, s.ClientURL(), "deploy", "3") // OFFLOAD_NATS_DRAIN unset: the default
	p := remotePool(t, connect(t, s), "deploy", pool.Options{Workers: 5, OnWorkerEvent: hook})
	waitNodes(t, p, 1)

	// Two calls that run on a until the test says: see below.
	ctx := testCtx(t)
	release := filepath.Join(t.TempDir(), "release")
	var running []*pool.Future[int]
	for range 2 {
		f, err := pool.Submit(ctx, p, awaitFile, release)
		require.NoError(t, err)
		running = append(running, f)
	}
	require.Eventually(t, func() bool { n := p.Nodes(); return len(n) == 1 && n[0].Busy == 2 }, 10*time.Second, time.Millisecond,
		"both long calls run on the node to be stopped")
	b := startNode(t, s.ClientURL(), "deploy", "2")
	waitNodes(t, p, 2)

	// The load: two submitters of short calls, spread over a's free slot
	// and b's, until told to stop.
	type submitted struct {
		f     *pool.Future[int]
		after bool // submitted once a had said it leaves
	}
	var (
		loadMu  sync.Mutex
		load    []submitted
		leaving bool
		stop    = make(chan struct{})
		loaders sync.WaitGroup
	)
	for range 2 {
		loaders.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				loadMu.Lock()
				after := leaving
				loadMu.Unlock()
				f, err := pool.SubmitBlocking(ctx, p, sleepPID, 20*time.Millisecond)
				if !assert.NoError(t, err) {
					return
				}
				loadMu.Lock()
				load = append(load, submitted{f: f, after: after})
				loadMu.Unlock()
				_, _ = f.Wait()
			}
		})
	}
	defer func() { // on every path out: the loaders end before the test does
		select {
		case <-stop:
		default:
			close(stop)
		}
		loaders.Wait()
	}()

	require.Eventually(t, func() bool {
		loadMu.Lock()
		defer loadMu.Unlock()
		return len(load) >= 20
	}, time.Minute, time.Millisecond, "the load runs")
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGTERM))
	loadMu.Lock()
	var unfinished []*pool.Future[int] // at the signal: in flight on a or b
	for _, l := range load {
		select {
		case <-l.f.Done():
		default:
			unfinished = append(unfinished, l.f)
		}
	}
	loadMu.Unlock()
	require.Eventually(t, func() bool { return strings.Contains(a.Output.String(), "natsremote: leaving") }, 10*time.Second,
		time.Millisecond, "the node says it leaves")
	loadMu.Lock()
	leaving = true
	loadMu.Unlock()
	// The drain outlasts the time a submitter waits for a silent node
	// (2.5 heartbeats): only the node's pongs keep its calls alive.
	time.Sleep(3 * testHeartbeat)
	for _, f := range running {
		select {
		case <-f.Done():
			_, err := f.Wait()
			t.Fatalf("a long call ended before its release: %v", err)
		default:
		}
	}
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	state := a.Exit(t, time.Minute)
	assert.Equal(t, 0, state.ExitCode(), "a node that drained exits 0")
	assert.Contains(t, a.Output.String(), "natsremote: left")
	close(stop)
	loaders.Wait()

	for i, f := range running {
		got, err := f.Wait()
		require.NoError(t, err, "long call %d, in flight on the stopped node", i)
		assert.Equal(t, a.Cmd.Process.Pid, got, "long call %d ran where it started", i)
	}
	after := 0
	for i, l := range load {
		got, err := l.f.Wait()
		require.NoError(t, err, "short call %d", i)
		if l.after {
			after++
			assert.Equal(t, b.Cmd.Process.Pid, got, "short call %d, submitted once the node said it leaves, ran on the other", i)
		}
	}
	require.NotZero(t, after, "calls were submitted while the node drained")
	onA := len(running)
	for _, f := range unfinished {
		if got, _ := f.Wait(); got == a.Cmd.Process.Pid {
			onA++
		}
	}
	require.Eventually(t, func() bool { return len(p.Nodes()) == 1 }, 10*time.Second, time.Millisecond, "the node left")
	st := p.Stats()
	assert.Zero(t, st.Failed, "%+v", st)
	assert.Zero(t, st.Crashed, "the node left, it was not lost: %+v", st)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, events[pool.NodeLeft], "the pool saw the node leave: %v", events)
	assert.Zero(t, events[pool.NodeLost], "%v", events)
	t.Logf("%d calls in flight on the stopped node at SIGTERM, %d short calls (%d submitted while it drained): none failed",
		onA, len(load), after)
}
