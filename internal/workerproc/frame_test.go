//go:build linux

package workerproc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	const max = 1 << 20
	tests := []struct {
		name string
		f    Frame
	}{
		{"empty", Frame{Kind: 1, ID: 7}},
		{"small", Frame{Kind: 2, ID: 1 << 60, Body: []byte("hello")}},
		{"buffer sized", Frame{Kind: 3, ID: 9, Body: bytes.Repeat([]byte{'a'}, readBufSize)}},
		{"at the max", Frame{Kind: 4, ID: 10, Body: bytes.Repeat([]byte{'b'}, max)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := newPair(t, max)
			errc := make(chan error, 1)
			go func() { errc <- a.WriteFrame(tt.f) }()
			got, err := b.ReadFrame()
			require.NoError(t, err)
			require.NoError(t, <-errc)
			assert.Equal(t, tt.f.Kind, got.Kind)
			assert.Equal(t, tt.f.ID, got.ID)
			assert.Equal(t, len(tt.f.Body), len(got.Body))
			assert.True(t, bytes.Equal(tt.f.Body, got.Body))
		})
	}
}

func TestFrameConcurrentWriters(t *testing.T) {
	t.Parallel()
	a, b := newPair(t, 1<<20)
	const writers, each = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				body := bytes.Repeat([]byte{byte(w)}, 1+i*37%70000)
				assert.NoError(t, a.WriteFrame(Frame{Kind: byte(w), ID: uint64(i), Body: body}))
			}
		})
	}
	next := make([]uint64, writers)
	for range writers * each {
		f, err := b.ReadFrame()
		require.NoError(t, err)
		require.Equal(t, next[f.Kind], f.ID, "frames of one writer arrive in order")
		require.Len(t, f.Body, 1+int(f.ID)*37%70000)
		require.Equal(t, bytes.Repeat([]byte{f.Kind}, len(f.Body)), f.Body, "frames never interleave")
		next[f.Kind]++
	}
	wg.Wait()
}

func TestFrameLimits(t *testing.T) {
	t.Parallel()
	const max = 1000
	header := func(length uint32, nfds byte, flags byte) []byte {
		h := make([]byte, HeaderSize)
		binary.BigEndian.PutUint32(h, length)
		h[5], h[6] = nfds, flags
		return h
	}
	reserved := header(1, 0, 0)
	reserved[7] = 1
	tests := []struct {
		name string
		raw  []byte
		want error
	}{
		{"length above max", header(max+1, 0, 0), ErrFrameTooLarge},
		{"length 4 GiB", header(^uint32(0), 0, 0), ErrFrameTooLarge},
		{"reserved byte set", reserved, ErrCorruptFrame},
		{"unknown flag", header(1, 0, 2), ErrCorruptFrame},
		{"bulk body never sent", header(1, 0, flagBulk), ErrCorruptFrame},
		{"too many fds announced", header(0, MaxFDs+1, 0), ErrCorruptFrame},
		{"fds announced none sent", header(0, 2, 0), ErrCorruptFrame},
		{"ends in header", []byte{0, 0, 0}, io.ErrUnexpectedEOF},
		{"ends in body", append(header(10, 0, 0), 1, 2, 3), io.ErrUnexpectedEOF},
		{"clean end", nil, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := newPair(t, max)
			_, err := unix.Write(a.wfd, tt.raw)
			require.NoError(t, err)
			require.NoError(t, a.Close())
			_, err = b.ReadFrame()
			require.ErrorIs(t, err, tt.want)
			_, again := b.ReadFrame()
			assert.Equal(t, err, again, "a broken stream stays broken")
		})
	}

	t.Run("write above max", func(t *testing.T) {
		t.Parallel()
		a, _ := newPair(t, max)
		err := a.WriteFrame(Frame{Body: make([]byte, max+1)})
		require.ErrorIs(t, err, ErrFrameTooLarge)
		assert.Contains(t, err.Error(), "1001 bytes exceeds the maximum of 1000")
		require.NoError(t, a.WriteFrame(Frame{Body: make([]byte, max)}), "a refused write sends nothing")
	})
}

func TestConnClose(t *testing.T) {
	t.Parallel()
	a, b := newPair(t, 100)
	readc := make(chan error, 1)
	go func() {
		_, err := a.ReadFrame()
		readc <- err
	}()
	require.NoError(t, a.Close())
	require.ErrorIs(t, <-readc, ErrClosed, "Close unblocks a blocked reader")
	require.NoError(t, a.Close(), "Close is idempotent")
	require.ErrorIs(t, a.WriteFrame(Frame{}), ErrClosed)
	_, err := b.ReadFrame()
	require.ErrorIs(t, err, io.EOF, "the peer reads EOF")
	err = b.WriteFrame(Frame{Body: []byte("x")})
	require.Error(t, err)
	assert.True(t, errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET), "%v", err)
}

func TestFrameFDs(t *testing.T) {
	t.Parallel()
	a, b := newPair(t, 100)
	r, w := newPipe(t)
	require.NoError(t, a.WriteFrame(Frame{Kind: 1, Body: []byte("before")}))
	require.NoError(t, a.WriteFrame(Frame{Kind: 2, Body: []byte("with fds"), FDs: []int{int(r.Fd()), int(w.Fd())}}))
	require.NoError(t, a.WriteFrame(Frame{Kind: 3, Body: []byte("after")}))

	f, err := b.ReadFrame()
	require.NoError(t, err)
	assert.Empty(t, f.FDs)
	f, err = b.ReadFrame()
	require.NoError(t, err)
	require.Len(t, f.FDs, 2)
	gotR, gotW := os.NewFile(uintptr(f.FDs[0]), "r"), os.NewFile(uintptr(f.FDs[1]), "w")
	defer gotR.Close()
	_, err = gotW.Write([]byte("through the passed pipe"))
	require.NoError(t, err)
	require.NoError(t, gotW.Close())
	require.NoError(t, w.Close())
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "through the passed pipe", string(got))
	f, err = b.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, "after", string(f.Body))
	assert.Empty(t, f.FDs)

	err = a.WriteFrame(Frame{FDs: make([]int, MaxFDs+1)})
	require.Error(t, err)
}

func TestWriteFrames(t *testing.T) {
	t.Parallel()
	const max = 100 << 10
	a, b := newPair(t, max)
	r, _ := newPipe(t)
	var batch []Frame
	for i := range 5000 {
		f := Frame{Kind: 1, ID: uint64(i), Body: bytes.Repeat([]byte{byte(i)}, i%50)}
		switch i {
		case 10:
			f.Body = make([]byte, max) // large: written apart
		case 20:
			f.FDs = []int{int(r.Fd())}
		}
		batch = append(batch, f)
	}
	errc := make(chan error, 1)
	go func() { errc <- a.WriteFrames(batch...) }()
	for i, want := range batch {
		got, err := b.ReadFrame()
		require.NoError(t, err)
		require.Equal(t, uint64(i), got.ID)
		require.Equal(t, want.Body, got.Body)
		require.Len(t, got.FDs, len(want.FDs))
		closeFDs(got.FDs)
	}
	require.NoError(t, <-errc)

	err := a.WriteFrames(Frame{Body: []byte("ok")}, Frame{Body: make([]byte, max+1)})
	require.ErrorIs(t, err, ErrFrameTooLarge)
	require.NoError(t, a.WriteFrames(Frame{ID: 99}))
	got, err := b.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, uint64(99), got.ID, "a refused batch sends nothing")
}
