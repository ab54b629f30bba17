//go:build unix

package subproc

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/offloadgo/offload/internal/workerproc"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMovesRoundTrip(t *testing.T) {
	t.Parallel()
	id := func(a uint64, i uint32) shmbuf.SegmentID { return shmbuf.SegmentID{Arena: a, Index: i} }
	for _, m := range []moves{
		{broken: true},
		{segs: []segmentMeta{{id(1, 0), 4096}, {id(1<<63, 7), 64 << 20}}},
		{releases: []shmbuf.Ref{{Segment: id(9, 2), Offset: 64, Length: 1 << 40}, {Segment: id(9, 3)}}},
		{broken: true, segs: []segmentMeta{{id(3, 3), 1}}, releases: []shmbuf.Ref{{Segment: id(2, 1), Offset: 1, Length: 2}}},
	} {
		body := appendMoves([]byte("head"), m)
		rest, got, err := splitMoves(body, len(m.segs))
		require.NoError(t, err)
		assert.Equal(t, []byte("head"), rest)
		assert.Equal(t, m, got)
		_, _, err = splitMoves(body, len(m.segs)+1)
		require.ErrorIs(t, err, errCorruptMoves, "descriptor count must match")
	}
}

func TestMovesCorrupt(t *testing.T) {
	t.Parallel()
	good := appendMoves(nil, moves{releases: []shmbuf.Ref{{Offset: 1}}})
	for name, body := range map[string][]byte{
		"empty":         nil,
		"short":         {0, 0, 1},
		"zero length":   {0, 0, 0, 0},
		"length beyond": {0, 0, 0, 0, 0, 9},
		"unknown flag":  {2, 0, 0, 0, 0, 0, 3},
		"too many segs": {0, 17, 0, 0, 0, 0, 3},
		"short release": append(append([]byte{}, good[:len(good)-5]...), 0, 0, 0, byte(len(good)-5)),
		"size zero":     appendMoves(nil, moves{segs: []segmentMeta{{size: 0}}}),
		"huge size":     appendMoves(nil, moves{segs: []segmentMeta{{size: maxSegmentBytes + 1}}}),
		"truncated seg": {0, 1, 1, 2, 0, 0, 0, 3},
		"long uvarint":  {0, 0x80, 0, 0, 0, 0, 0, 4},
	} {
		nfds := 0
		if name == "size zero" || name == "huge size" || name == "truncated seg" {
			nfds = 1
		}
		_, _, err := splitMoves(body, nfds)
		require.ErrorIs(t, err, errCorruptMoves, name)
	}
}

func FuzzSplitMoves(f *testing.F) {
	f.Add(appendMoves([]byte("x"), moves{broken: true, segs: []segmentMeta{{size: 7}}, releases: []shmbuf.Ref{{Length: 3}}}), 1)
	f.Add(appendMoves(nil, moves{}), 0)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, 3)
	f.Fuzz(func(t *testing.T, body []byte, nfds int) {
		rest, m, err := splitMoves(body, nfds)
		if err != nil {
			return
		}
		require.Len(t, m.segs, nfds)
		require.LessOrEqual(t, len(rest)+len(m.releases)*releaseSize, len(body))
		// What parses re-encodes to the same bytes.
		require.Equal(t, body, appendMoves(append([]byte{}, rest...), m))
	})
}

// seal adds nothing to a frame without Buffer traffic, spreads releases
// over frames when they don't fit, and refuses more segments than a frame
// carries.
func TestPeerLinkSeal(t *testing.T) {
	t.Parallel()
	skipUnsupportedPlatform(t)
	k := newPeerLink(1<<20, shmbuf.ParentSide)
	f := workerproc.Frame{Kind: kindResult, Body: []byte("plain")}
	require.NoError(t, k.seal(&f, nil, false, false))
	assert.Equal(t, workerproc.Frame{Kind: kindResult, Body: []byte("plain")}, f)
	require.NoError(t, k.seal(&f, nil, false, true))
	assert.Equal(t, kindResult|kindMoves, f.Kind, "a Peer-encoded body is flagged even with nothing to carry")

	tight := newPeerLink(trailerFixed+3*releaseSize, shmbuf.WorkerSide)
	tight.carry = make([]shmbuf.Ref, 5)
	for i := range tight.carry {
		tight.carry[i].Offset = uint64(i)
	}
	var got []shmbuf.Ref
	for range 2 {
		f := workerproc.Frame{Kind: kindCall}
		require.NoError(t, tight.seal(&f, nil, false, false))
		_, m, err := splitMoves(f.Body, 0)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(f.Body), tight.maxFrame)
		got = append(got, m.releases...)
	}
	require.Len(t, got, 5, "what didn't fit went on the next frame")
	for i, r := range got {
		assert.Equal(t, uint64(i), r.Offset)
	}

	f = workerproc.Frame{Kind: kindCall}
	err := k.seal(&f, make([]shmbuf.Segment, workerproc.MaxFDs+1), false, true)
	require.Error(t, err)
	assert.Equal(t, kindCall, f.Kind, "nothing sealed")
}

// open closes every descriptor of a frame it can't use.
func TestPeerLinkOpenClosesDescriptors(t *testing.T) {
	skipUnsupportedPlatform(t)
	// Not parallel: counts the process's descriptors.
	testkit.SkipOffLinux(t, "counts descriptors in /proc/self/fd")
	count := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(entries)
	}
	pipe := func() []int {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		fds := []int{}
		for _, f := range []*os.File{r, w} {
			fd, err := dupFD(f)
			require.NoError(t, err)
			fds = append(fds, fd)
			f.Close()
		}
		return fds
	}
	k := newPeerLink(1<<20, shmbuf.ParentSide)
	defer k.close()
	before := count()
	for name, f := range map[string]workerproc.Frame{
		"unflagged, stray descriptors": {Kind: kindResult, FDs: pipe()},
		"corrupt trailer":              {Kind: kindResult | kindMoves, Body: []byte{1, 2, 3}, FDs: pipe()},
		"count mismatch":               {Kind: kindResult | kindMoves, Body: appendMoves(nil, moves{segs: []segmentMeta{{size: 1}}}), FDs: pipe()},
		"not memfds": {Kind: kindResult | kindMoves, FDs: pipe(), Body: appendMoves(nil, moves{segs: []segmentMeta{
			{id: shmbuf.SegmentID{Arena: 5}, size: 4096}, {id: shmbuf.SegmentID{Arena: 5, Index: 1}, size: 4096}}})},
	} {
		_, _, broken, err := k.open(f)
		if name == "unflagged, stray descriptors" {
			require.NoError(t, err)
		} else {
			require.Error(t, err, name)
			assert.True(t, broken, name)
		}
	}
	assert.Equal(t, before, count(), "every descriptor was closed")
	assert.Zero(t, k.peer.Stats().Adopted)

	// Releases of memory never lent are refused, and break the link.
	f := workerproc.Frame{Kind: kindResult | kindMoves, Body: appendMoves(nil, moves{releases: []shmbuf.Ref{{Length: 1}}})}
	_, _, broken, err := k.open(f)
	require.ErrorIs(t, err, shmbuf.ErrBadRef)
	assert.True(t, broken)
}

// dupFD returns a descriptor of f's that outlives f.
func dupFD(f *os.File) (int, error) {
	return syscall.Dup(int(f.Fd()))
}

// The worker's serve loop decodes a flagged call with its Peer, and answers
// a call whose trailer it can't use with an error that asks to be retired.
func TestServeMoves(t *testing.T) {
	t.Parallel()
	skipUnsupportedPlatform(t)
	parent, code := startServe(t)
	defer parent.Close()
	_, err := parent.ReadFrame() // the hello
	require.NoError(t, err)
	link := newPeerLink(parent.MaxFrame(), shmbuf.ParentSide)
	defer link.close()

	sp := &ProcessCarrier{maxPayload: 1 << 20}
	body, segs, _, err := sp.encodeMoving(link.peer, "proc.internal.add", nil, [2]int{2, 3})
	require.NoError(t, err)
	f := workerproc.Frame{Kind: kindCall, ID: 1, Body: body}
	require.NoError(t, link.seal(&f, segs, false, true))
	assert.Equal(t, kindCall|kindMoves, f.Kind)
	require.NoError(t, parent.WriteFrame(f))
	got, err := parent.ReadFrame()
	require.NoError(t, err)
	kind, out, broken, err := link.open(got)
	require.NoError(t, err)
	assert.False(t, broken)
	assert.Equal(t, kindResult, kind)
	var sum int
	require.NoError(t, sp.decode("proc.internal.add", out, &sum, link.peer))
	assert.Equal(t, 5, sum)

	bad := workerproc.Frame{Kind: kindCall | kindMoves, ID: 2, Body: append(append([]byte{}, body...), 0xee, 0, 0, 0, 1)}
	require.NoError(t, parent.WriteFrame(bad))
	got, err = parent.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, uint64(2), got.ID)
	kind, out, broken, err = link.open(got)
	require.NoError(t, err)
	assert.True(t, broken, "the worker asks to be retired")
	assert.Equal(t, kindError, kind)
	assert.Contains(t, string(out), "corrupt moves trailer")

	parent.Close()
	assert.Equal(t, 0, <-code)
}

var _ = register("proc.internal.add", func(_ context.Context, in [2]int) (int, error) {
	return in[0] + in[1], nil
})
