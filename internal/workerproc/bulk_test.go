//go:build linux && !offload_portable

package workerproc

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// pattern is a body whose every byte says where it is, so that a body
// put together wrong (a piece lost, doubled or swapped) can't compare equal.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i/251) ^ byte(i) ^ seed
	}
	return b
}

// Bodies from bulkMin up take the bulk socket, smaller ones the pipe; both
// arrive whole and in order, both ways, with their descriptors, alone or
// among small frames in one WriteFrames.
func TestBulkFrames(t *testing.T) {
	t.Parallel()
	const max = 8 << 20
	a, b := newPair(t, max)
	r, _ := newPipe(t)

	frames := []Frame{
		{Kind: 1, ID: 1, Body: pattern(bulkMin-1, 1)},
		{Kind: 2, ID: 2, Body: pattern(bulkMin, 2)},
		{Kind: 3, ID: 3, Body: []byte("small, between two bulk frames")},
		{Kind: 4, ID: 4, Body: pattern(5<<20+3, 4), FDs: []int{int(r.Fd())}},
		{Kind: 5, ID: 5, Body: pattern(max, 5)},
	}
	for _, dir := range []struct {
		name     string
		from, to *Conn
	}{{"parent to child", a, b}, {"child to parent", b, a}} {
		errc := make(chan error, 1)
		go func() { errc <- dir.from.WriteFrames(frames...) }()
		for _, want := range frames {
			got, err := dir.to.ReadFrame()
			require.NoError(t, err, dir.name)
			assert.Equal(t, want.Kind, got.Kind, dir.name)
			assert.Equal(t, want.ID, got.ID, dir.name)
			assert.True(t, bytes.Equal(want.Body, got.Body), "%s: frame %d's body", dir.name, want.ID)
			assert.Len(t, got.FDs, len(want.FDs), dir.name)
			closeFDs(got.FDs)
		}
		require.NoError(t, <-errc, dir.name)
	}
}

// A bulk frame's trailer is written only once the reader has taken most of
// the body: when the reader gets the header, the trailer can't be with
// it. So while a peer has not read a bulk frame whole, a byte of it is in
// the pipe (Unread > 0), or the frame was not written whole (WriteFrame
// fails): a dead worker is never thought to have taken a call it had not
// read. Checked here step by step on the raw descriptors.
func TestBulkTrailerFollowsTheBody(t *testing.T) {
	t.Parallel()
	a, b := newPair(t, 4<<20)
	sndbuf, err := unix.GetsockoptInt(a.bfd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	require.NoError(t, err)
	require.Less(t, sndbuf, bulkMin, "a bulk body must not fit in the socket's buffer")

	body := pattern(2*bulkMin, 9)
	errc := make(chan error, 1)
	go func() { errc <- a.WriteFrame(Frame{Kind: 7, ID: 42, Body: body}) }()

	require.NoError(t, b.wait(b.rfd, unix.POLLIN))
	head := make([]byte, 64)
	n, err := unix.Read(b.rfd, head)
	require.NoError(t, err)
	require.Equal(t, HeaderSize, n, "the header comes alone: the trailer waits for the body")
	assert.Equal(t, flagBulk, head[6])
	select {
	case err := <-errc:
		t.Fatalf("WriteFrame returned (%v) before the body was read", err)
	default:
	}

	got := make([]byte, 0, len(body))
	for len(got) < len(body) {
		m, err := b.recvBulk(got[len(got):cap(got)])
		require.NoError(t, err)
		got = got[:len(got)+m]
	}
	assert.True(t, bytes.Equal(body, got))
	require.NoError(t, <-errc)

	unread, err := a.Unread()
	require.NoError(t, err)
	assert.Equal(t, len(bulkTrailer), unread, "until the reader takes the trailer, the frame is not read whole")
	n, err = b.recv(head)
	require.NoError(t, err)
	assert.Equal(t, bulkTrailer[:], head[:n])
	unread, err = a.Unread()
	require.NoError(t, err)
	assert.Zero(t, unread)
}

// A peer that dies inside a bulk body fails the write: the frame was not
// sent whole.
func TestBulkWriteToADeadPeer(t *testing.T) {
	t.Parallel()
	a, b := newPair(t, 4<<20)
	errc := make(chan error, 1)
	go func() { errc <- a.WriteFrame(Frame{Kind: 1, ID: 1, Body: make([]byte, 2*bulkMin)}) }()
	require.NoError(t, b.wait(b.rfd, unix.POLLIN)) // the header is there: the body is on its way
	require.NoError(t, b.Close())
	assert.ErrorIs(t, <-errc, unix.EPIPE)
}

// The reader's side of bulk frames, on streams made by hand.
func TestBulkReaderRefusesBrokenFrames(t *testing.T) {
	t.Parallel()
	const max = 64
	header := func(length uint32, flags byte) []byte {
		f := Frame{Kind: 1, ID: 3, Body: make([]byte, length)}
		h := make([]byte, HeaderSize)
		putHeader(h, &f)
		h[6] = flags
		return h
	}
	source := func(b []byte) func([]byte) (int, error) { return bytes.NewReader(b).Read }
	tests := []struct {
		name         string
		stream, bulk []byte
		noBulk       bool
		want         string
	}{
		{"whole", append(header(5, flagBulk), bulkTrailer[:]...), []byte("hello"), false, ""},
		{"no bulk stream", append(header(5, flagBulk), bulkTrailer[:]...), nil, true, "bulk stream this connection does not have"},
		{"body cut short", append(header(5, flagBulk), bulkTrailer[:]...), []byte("hel"), false, "inside a frame body (bulk)"},
		{"no trailer", header(5, flagBulk), []byte("hello"), false, "inside a frame trailer"},
		{"wrong trailer", append(header(5, flagBulk), 0), []byte("hello"), false, "trailer is 0x0"},
		{"too large", append(header(max+1, flagBulk), bulkTrailer[:]...), make([]byte, max+1), false, "the maximum is 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFrameReader(max, source(tt.stream), nil)
			if !tt.noBulk {
				r.bulk = source(tt.bulk)
			}
			f, err := r.next()
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, []byte("hello"), f.Body)
				_, err = r.next()
				assert.ErrorIs(t, err, io.EOF, "the trailer was consumed")
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
