//go:build linux

package workerproc

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longWaits makes c's reader take its waits for long ones, so that it
// parks in the netpoller.
func longWaits(t *testing.T, c *Conn) {
	t.Helper()
	require.NotNil(t, c.waiter.raw, "the read end is in the netpoller")
	c.waiter.recent = time.Second
}

// parked waits until a goroutine is parked in waiter.park, in the
// netpoller.
func parked(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "(*waiter).park") && strings.Contains(g, "runtime_pollWait") {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatal("no reader parked in the netpoller")
}

// A reader that parks gets every frame, one by one and several at once.
func TestParkedReaderGetsItsFrames(t *testing.T) {
	a, b := newPair(t, 1<<20)
	longWaits(t, b)
	for i := range 20 {
		got := make(chan Frame, 1)
		go func() {
			f, err := b.ReadFrame()
			assert.NoError(t, err)
			got <- f
		}()
		if i%2 == 0 {
			parked(t)
		}
		body := bytes.Repeat([]byte{byte(i)}, 1+i*1000)
		require.NoError(t, a.WriteFrame(Frame{Kind: 1, ID: uint64(i), Body: body}))
		f := <-got
		assert.Equal(t, uint64(i), f.ID)
		assert.Equal(t, body, f.Body)
		b.waiter.recent = time.Second // the wait just measured may be short
	}
}

// Close ends a read parked in the netpoller at once.
func TestCloseEndsAParkedRead(t *testing.T) {
	_, b := newPair(t, 1024)
	longWaits(t, b)
	errc := make(chan error, 1)
	go func() {
		_, err := b.ReadFrame()
		errc <- err
	}()
	parked(t)
	require.NoError(t, b.Close())
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the parked read")
	}
}
