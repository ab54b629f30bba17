//go:build linux || darwin || freebsd || netbsd || openbsd

package pool_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// Messages nested deeper than a receiver decodes (100 arrays and maps
// within each other), on a Subprocess pool: a worker's hostile answer,
// and values of the caller's and the task's own that deep.

// deepAnswer does what a task that owns its worker process can: it writes
// an answer of its own to the worker's answer descriptor, n nested
// arrays (0x91 ... 0x01) as the result of the process's first call,
// then waits. The frame is the worker channel's (see
// internal/workerproc/frame.go): length, kind (3, a result), no
// descriptors, and the call's number.
var deepAnswer = pool.Register("test.deep-answer", func(ctx context.Context, n int) (any, error) {
	const answerFD, kindResult, firstCall = 4, 3, 1
	body := append(bytes.Repeat([]byte{0x91}, n), 1)
	frame := make([]byte, 16, 16+len(body))
	binary.BigEndian.PutUint32(frame[0:4], uint32(len(body)))
	frame[4] = kindResult
	binary.BigEndian.PutUint64(frame[8:16], firstCall)
	frame = append(frame, body...)
	for len(frame) > 0 {
		n, err := unix.Write(answerFD, frame)
		if errors.Is(err, unix.EAGAIN) { // the channel is non-blocking
			_, _ = unix.Poll([]unix.PollFd{{Fd: answerFD, Events: unix.POLLOUT}}, -1)
			continue
		}
		if err != nil {
			return nil, err
		}
		frame = frame[n:]
	}
	<-ctx.Done()
	return nil, ctx.Err()
})

// A worker that answers a million nested arrays fails its call with an
// error, in a small stack (the limit makes a deep recursion fatal), and
// the pool goes on.
func TestSubprocessDeepAnswerFailsItsCall(t *testing.T) {
	// Not parallel: the stack limit is the process's.
	old := debug.SetMaxStack(16 << 20)
	defer debug.SetMaxStack(old)
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)
	_, err := pool.Run(ctx, p, deepAnswer, 1_000_000)
	require.ErrorContains(t, err, `pool: decode output of task "test.deep-answer"`)
	require.ErrorContains(t, err, "nested more than 100 deep")
	out, err := pool.Run(ctx, p, add, [2]int{2, 3})
	require.NoError(t, err)
	assert.Equal(t, 5, out)
}

// link is a linked list, as deep as it is long once encoded.
type link struct {
	Next *link
	Buf  *transfer.Buffer
	V    int
}

func chain(n int, buf *transfer.Buffer) *link {
	l := &link{Buf: buf}
	for i := 1; i < n; i++ {
		l = &link{Next: l, V: i}
	}
	return l
}

// echoChain returns a list as long as its input says; chainWithBuffer
// one that ends with a Buffer.
var (
	echoChain = pool.Register("test.echo-chain", func(_ context.Context, n int) (*link, error) {
		return chain(n, nil), nil
	})
	chainWithBuffer = pool.Register("test.chain-with-buffer", func(_ context.Context, n int) (*link, error) {
		buf, err := transfer.NewBuffer(10)
		return chain(n, buf), err
	})
)

// lengthOf returns its input's length.
var lengthOf = pool.Register("test.length-of", func(_ context.Context, l *link) (int, error) {
	n := 0
	for ; l != nil; l = l.Next {
		n++
	}
	return n, nil
})

// A value nested deeper than its receiver decodes is refused where it is
// encoded, in either direction, with an error that says so; one at the
// limit crosses. An input or output whose Buffers had moved when its
// depth showed costs its worker process, whose Peer frees them.
func TestSubprocessTooDeepValues(t *testing.T) {
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)

	n, err := pool.Run(ctx, p, lengthOf, chain(100, nil))
	require.NoError(t, err)
	assert.Equal(t, 100, n)
	_, err = pool.Run(ctx, p, lengthOf, chain(101, nil))
	require.ErrorContains(t, err, `pool: encode input of task "test.length-of": value nested more than 100 deep`)

	out, err := pool.Run(ctx, p, echoChain, 100)
	require.NoError(t, err)
	assert.Equal(t, 99, out.V)
	_, err = pool.Run(ctx, p, echoChain, 101)
	require.ErrorContains(t, err, `pool: encode output of task "test.echo-chain": value nested more than 100 deep`)

	before := transfer.Stats().InUse
	buf, err := transfer.NewBuffer(1 << 20)
	require.NoError(t, err)
	_, err = pool.Run(ctx, p, lengthOf, chain(101, buf))
	require.ErrorContains(t, err, "value nested more than 100 deep")
	assert.True(t, buf.Detached(), "moved when its depth showed")
	// Its segment was not sent to that process after all: a Buffer in it
	// reaches the process that replaced it.
	next, err := transfer.NewBuffer(10)
	require.NoError(t, err)
	n, err = pool.Run(ctx, p, lengthOf, chain(3, next))
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	require.Eventually(t, func() bool { return transfer.Stats().InUse <= before }, 5*time.Second, time.Millisecond,
		"the retired process's Peer freed the Buffers")

	_, err = pool.Run(ctx, p, chainWithBuffer, 101)
	require.ErrorContains(t, err, "value nested more than 100 deep")
	made, err := pool.Run(ctx, p, makeBuffer, 10)
	require.NoError(t, err, "a Buffer from the process that replaced the one that lent its segment for nothing")
	assert.Equal(t, 10, made.Len())
	made.Release()
}
