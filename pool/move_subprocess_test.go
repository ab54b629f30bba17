package pool_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// Buffers to and from Subprocess workers: ownership, nesting, rejection,
// size, crashes and memory. Tasks run in the re-executed test binary.

// bundle nests Buffers in structs and slices.
type bundle struct {
	Name  string
	Parts []*transfer.Buffer
	Inner struct{ B *transfer.Buffer }
}

// sized is a Buffer and what the worker should know of it.
type sized struct {
	Buf   *transfer.Buffer
	First byte
	Last  byte
	Len   int
}

var (
	// swapBundle returns its parts in reverse order, with Inner.B first.
	swapBundle = pool.Register("test.swap-bundle", func(_ context.Context, in bundle) (bundle, error) {
		out := bundle{Name: in.Name + "!"}
		out.Parts = append(out.Parts, in.Inner.B)
		for i := len(in.Parts) - 1; i >= 0; i-- {
			out.Parts = append(out.Parts, in.Parts[i])
		}
		return out, nil
	})
	// inspect reports the ends of its input, and keeps it (the pool
	// releases it when the task returns).
	inspect = pool.Register("test.inspect", func(_ context.Context, in *transfer.Buffer) (sized, error) {
		b := in.Bytes()
		return sized{Len: len(b), First: b[0], Last: b[len(b)-1]}, nil
	})
	// makeBuffer returns a new Buffer of n bytes, byte i = i%251.
	makeBuffer = pool.Register("test.make-buffer", func(_ context.Context, n int) (*transfer.Buffer, error) {
		b, err := transfer.NewBuffer(n)
		if err != nil {
			return nil, err
		}
		for i := range b.Bytes() {
			b.Bytes()[i] = byte(i % 251)
		}
		return b, nil
	})
	// arenaInUse reports the worker's arena use.
	arenaInUse = pool.Register("test.arena-in-use", func(_ context.Context, _ int) (int64, error) {
		return transfer.Stats().InUse, nil
	})
	// holdThen holds its input and then exits the process, or blocks
	// until its ctx ends.
	holdThen = pool.Register("test.hold-then", func(ctx context.Context, in holdIn) (int, error) {
		if in.Exit {
			os.Exit(3)
		}
		<-ctx.Done()
		return in.Buf.Len(), nil
	})
	workerPID = pool.Register("test.worker-pid", func(_ context.Context, _ int) (int, error) {
		return os.Getpid(), nil
	})
	// nap sleeps unless its ctx ends first. In a synctest bubble it
	// takes exactly d of the bubble's clock (where spin would never end).
	nap = pool.Register("test.nap", func(ctx context.Context, d time.Duration) (int, error) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		return 0, nil
	})
	// chanBuffer can't cross: it holds a channel beside the Buffer.
	chanBuffer = pool.Register("test.chan-buffer", func(_ context.Context, in struct {
		B *transfer.Buffer
		C chan int
	}) (int, error) {
		return 0, nil
	})
)

type holdIn struct {
	Buf  *transfer.Buffer
	Exit bool
}

// graces runs f without and with a TerminateGrace: the two ways the pool
// reads a worker's replies.
func graces(t *testing.T, f func(t *testing.T, o pool.Options)) {
	for _, g := range []time.Duration{0, time.Second} {
		t.Run("grace="+g.String(), func(t *testing.T) {
			f(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{TerminateGrace: g}})
		})
	}
}

func TestSubprocessBufferOwnership(t *testing.T) {
	graces(t, func(t *testing.T, o pool.Options) {
		p, _ := newProcPool(t, o)
		ctx := testCtx(t)

		// A moved Buffer's bytes arrive; the caller's handle is detached;
		// the worker's new Buffer arrives.
		in := testkit.CountingBuffer(t, transfer.NewBuffer, 1000, 1)
		var want byte
		for _, b := range in.Bytes() {
			want += b
		}
		out, err := pool.Run(ctx, p, sumBytes, frame{ID: 7, Buf: in})
		require.NoError(t, err)
		assert.True(t, in.Detached())
		assert.Nil(t, in.Bytes())
		assert.Equal(t, 7, out.ID)
		require.NotNil(t, out.Buf)
		assert.Equal(t, []byte{want}, out.Buf.Bytes())
		out.Buf.Release()

		// Use after move, and a second move, fail before anything is sent.
		submitted := p.Stats().Submitted
		_, err = pool.Run(ctx, p, sumBytes, frame{Buf: in})
		require.ErrorIs(t, err, transfer.ErrDetached)
		_, err = pool.Run(ctx, p, echoBuffer, in)
		require.ErrorIs(t, err, transfer.ErrDetached)
		assert.Equal(t, submitted, p.Stats().Submitted)

		// An echo gives the parent its own memory back, not a copy.
		b := testkit.CountingBuffer(t, transfer.NewBuffer, 4096, 9)
		first := &b.Bytes()[0]
		back, err := pool.Run(ctx, p, echoBuffer, b)
		require.NoError(t, err)
		assert.True(t, b.Detached())
		assert.Same(t, first, &back.Bytes()[0], "the parent's own memory came back")
		assert.Equal(t, byte(9+5), back.Bytes()[5])
		back.Release()

		// Buffers nested in structs and slices move both ways.
		var nb bundle
		nb.Name = "n"
		nb.Parts = []*transfer.Buffer{testkit.CountingBuffer(t, transfer.NewBuffer, 10, 10), testkit.CountingBuffer(t, transfer.NewBuffer, 20, 20)}
		nb.Inner.B = testkit.CountingBuffer(t, transfer.NewBuffer, 30, 30)
		parts := append([]*transfer.Buffer{nb.Inner.B}, nb.Parts...)
		got, err := pool.Run(ctx, p, swapBundle, nb)
		require.NoError(t, err)
		for _, b := range parts {
			assert.True(t, b.Detached())
		}
		assert.Equal(t, "n!", got.Name)
		require.Len(t, got.Parts, 3)
		for i, n := range []int{30, 20, 10} {
			assert.Equal(t, n, got.Parts[i].Len())
			assert.Equal(t, byte(n), got.Parts[i].Bytes()[0])
			got.Parts[i].Release()
		}

		// A Buffer made by the worker arrives intact, and is the
		// caller's: sent to a worker and back, it moves, not a copy.
		made, err := pool.Run(ctx, p, makeBuffer, 1<<20)
		require.NoError(t, err)
		require.Equal(t, 1<<20, made.Len())
		assert.Equal(t, byte(1000%251), made.Bytes()[1000])
		first = &made.Bytes()[0]
		made, err = pool.Run(ctx, p, echoBuffer, made)
		require.NoError(t, err)
		assert.Same(t, first, &made.Bytes()[0], "the worker's Buffer moved there and back")
		assert.Equal(t, byte(1000%251), made.Bytes()[1000])
		made.Release()
	})
}

// A rejected submission leaves the caller's Buffer attached.
func TestSubprocessRejectedKeepsBuffer(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, MaxQueue: pool.NoQueue})
	ctx := testCtx(t)
	busy, err := pool.Submit(ctx, p, nap, time.Minute)
	require.NoError(t, err)
	b := transfer.Move([]byte("keep me"))
	_, err = pool.Submit(ctx, p, echoBuffer, b)
	require.ErrorIs(t, err, pool.ErrQueueFull)
	assert.False(t, b.Detached())

	var unknown pool.Task[*transfer.Buffer, *transfer.Buffer]
	_, err = pool.Run(ctx, p, unknown, b)
	require.ErrorIs(t, err, pool.ErrUnknownTask)
	assert.False(t, b.Detached())

	p.Close()
	_, err = busy.Wait()
	require.Error(t, err)
	_, err = pool.Run(ctx, p, echoBuffer, b)
	require.ErrorIs(t, err, pool.ErrClosed)
	assert.False(t, b.Detached())
	assert.Equal(t, []byte("keep me"), b.Bytes())
	b.Release()
}

// What can't cross fails before anything is sent, and the caller keeps
// its Buffer.
func TestSubprocessUntransferableBuffer(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)
	b := transfer.Move([]byte("stay"))
	_, err := pool.Run(ctx, p, chanBuffer, struct {
		B *transfer.Buffer
		C chan int
	}{B: b, C: make(chan int)})
	require.ErrorIs(t, err, transfer.ErrNotTransferable)
	assert.Contains(t, err.Error(), `pool: task "test.chan-buffer": In type`)
	assert.False(t, b.Detached())

	b.Release()
	_, err = pool.Run(ctx, p, inspect, b)
	require.ErrorIs(t, err, transfer.ErrDetached)
	st := p.Stats()
	assert.Zero(t, st.Submitted)
	assert.EqualValues(t, 2, st.Rejected)
}

// A 44 MiB Buffer moves out of the box (MaxPayload bounds the encoded
// bytes, where it is a 29-byte reference), and a Buffer made by Move on
// ordinary memory is copied into the arena once on the way.
func TestSubprocessBigBuffer(t *testing.T) {
	t.Parallel()
	p, _ := newProcPool(t, pool.Options{Workers: 1, Subprocess: pool.SubprocessOptions{MaxPayload: 1 << 10}})
	ctx := testCtx(t)
	big := testkit.CountingBuffer(t, transfer.NewBuffer, 44<<20, 5)
	got, err := pool.Run(ctx, p, inspect, big)
	require.NoError(t, err)
	assert.Equal(t, sized{Len: 44 << 20, First: 5, Last: big44Last}, got)

	heap := make([]byte, 3<<20)
	heap[0], heap[len(heap)-1] = 1, 2
	got, err = pool.Run(ctx, p, inspect, transfer.Move(heap))
	require.NoError(t, err)
	assert.Equal(t, sized{Len: 3 << 20, First: 1, Last: 2}, got)
}

// After many calls moving Buffers each way, the parent's arena and the
// worker's are back where they started.
func TestSubprocessBufferMemoryDoesNotCreep(t *testing.T) {
	// Not parallel: reads the process arena's use.
	graces(t, func(t *testing.T, o pool.Options) {
		p, _ := newProcPool(t, o)
		ctx := testCtx(t)
		base := transfer.Stats().InUse
		for i := range 200 {
			out, err := pool.Run(ctx, p, sumBytes, frame{ID: i, Buf: testkit.CountingBuffer(t, transfer.NewBuffer, 1000+i, byte(i))})
			require.NoError(t, err)
			out.Buf.Release()
			back, err := pool.Run(ctx, p, echoBuffer, testkit.CountingBuffer(t, transfer.NewBuffer, 64<<10, 1))
			require.NoError(t, err)
			back.Release()
			_, err = pool.Run(ctx, p, inspect, testkit.CountingBuffer(t, transfer.NewBuffer, 100, 1)) // kept by the task
			require.NoError(t, err)
		}
		assert.Equal(t, base, transfer.Stats().InUse, "the parent's arena is back to its baseline")
		// The releases of the worker's Buffers travel on this call.
		inUse, err := pool.Run(ctx, p, arenaInUse, 0)
		require.NoError(t, err)
		assert.Zero(t, inUse, "the worker's arena is back to its baseline")
	})
}

// MaxTasksPerWorker replaces the process under Buffers in flight: those
// the parent got from a retired worker stay valid, those it lent come back.
func TestSubprocessRecycleWithBuffers(t *testing.T) {
	// Not parallel: reads the process arena's use.
	graces(t, func(t *testing.T, o pool.Options) {
		o.Subprocess.MaxTasksPerWorker = 2
		p, _ := newProcPool(t, o)
		ctx := testCtx(t)
		base := transfer.Stats().InUse
		var outs []*transfer.Buffer
		pids := map[int]bool{}
		for i := range 9 {
			out, err := pool.Run(ctx, p, sumBytes, frame{ID: i, Buf: testkit.CountingBuffer(t, transfer.NewBuffer, 100, byte(i))})
			require.NoError(t, err)
			outs = append(outs, out.Buf)
			pid, err := pool.Run(ctx, p, workerPID, 0) // the process's second task: its last
			require.NoError(t, err)
			pids[pid] = true
		}
		assert.Len(t, pids, 9, "every process was recycled after two tasks")
		for i, b := range outs {
			var want byte
			for j := range 100 {
				want += byte(i) + byte(j)
			}
			assert.Equal(t, []byte{want}, b.Bytes(), "output %d outlives its worker", i)
			b.Release()
		}
		assert.Equal(t, base, transfer.Stats().InUse)
	})
}

// A worker that dies holding a moved Buffer leaks no descriptor, mapping
// or arena space, whether it crashes or is terminated by a cancel (killed
// at once without a grace; with one, the task returns on its ctx and the
// process serves on until the pool shuts down); a Buffer the parent got
// from it stays valid until released.
func TestSubprocessDeadWorkerLeaksNothing(t *testing.T) {
	// Not parallel: counts the process's descriptors and mappings.
	for _, crash := range []bool{true, false} {
		name := map[bool]string{true: "crash", false: "cancel"}[crash]
		t.Run(name, func(t *testing.T) {
			graces(t, func(t *testing.T, o pool.Options) {
				base := transfer.Stats().InUse
				big := testkit.CountingBuffer(t, transfer.NewBuffer, 44<<20, 3)
				before := resourcesNow(t) // with the arena's segment for big

				requireSubprocess(t)
				p, err := pool.New(pool.Options{Isolation: pool.Subprocess, Workers: o.Workers, Subprocess: o.Subprocess})
				require.NoError(t, err)
				defer p.Close()
				ctx := testCtx(t)
				made, err := pool.Run(ctx, p, makeBuffer, 2<<20)
				require.NoError(t, err)
				if crash {
					_, err = pool.Run(ctx, p, holdThen, holdIn{Buf: big, Exit: true})
					require.ErrorIs(t, err, pool.ErrWorkerCrashed)
				} else {
					cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
					_, err = pool.Run(cctx, p, holdThen, holdIn{Buf: big})
					cancel()
					require.ErrorIs(t, err, pool.ErrTerminated)
				}
				assert.True(t, big.Detached())
				require.NoError(t, p.Shutdown(ctx))

				assert.Equal(t, base+2<<20, transfer.Stats().InUse, "the moved 44 MiB is freed; the worker's 2 MiB Buffer is ours")
				assert.Equal(t, byte(77%251), made.Bytes()[77], "the dead worker's Buffer is still readable")
				made.Release()
				assert.Equal(t, base, transfer.Stats().InUse)
				// The worker's Buffer's segment is this process's now: kept
				// for reuse, one descriptor and one mapping.
				assert.Equal(t, resources{before.fds + 1, before.mappings + 1}, resourcesNow(t), "no descriptor or mapping leaked")
			})
		})
	}
}

type resources struct{ fds, mappings int }

// resourcesNow counts this process's descriptors, and its mappings of
// shared-memory segments.
func resourcesNow(t *testing.T) resources {
	t.Helper()
	testkit.SkipOffLinux(t, "counts descriptors and mappings in /proc/self")
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	return resources{len(entries), strings.Count(string(maps), "offload-transfer")}
}

// big44Last is the last byte of a 44 MiB CountingBuffer from seed 5.
const big44Last = byte((5 + (44<<20 - 1)) % 256)
