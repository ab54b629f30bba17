package shmbuf

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/sys/unix"
)

// A Buffer the worker sends leaves its process: the worker keeps no
// segment, mapping nor descriptor of it, and the parent holds it as a
// Buffer of its own, which moves to a worker and back, and which a call
// the worker never read gives back (the pool's Retake).
func TestPeerWorkerGivesItsBuffers(t *testing.T) {
	// Not parallel: counts the process's descriptors and mappings.
	p := newPair(t)
	_, memfdsBefore := countFDs(t)
	mapsBefore := countMappings(t)

	made := arenaBuffer(t, p.childArena, 5000, 7)
	var out taskOut
	require.Equal(t, 1, send(t, p.child, p.parent, taskOut{Out: made}, &out))
	assert.True(t, made.Detached())
	assert.Equal(t, arenaUse{}, p.childArena.stats(), "the worker keeps nothing of what it sent")
	assert.Zero(t, p.child.Stats().Lent)
	assert.Equal(t, arenaUse{Segments: 1, Mapped: 8192, InUse: 8192}, p.parentArena.stats(), "the parent's arena took the segment over")
	assert.Zero(t, p.parent.Stats().Adopted)
	_, memfds := countFDs(t)
	assert.Equal(t, memfdsBefore+1, memfds, "one descriptor, the parent's")
	assert.Equal(t, mapsBefore+1, countMappings(t), "one mapping, the parent's")
	require.Equal(t, 5000, out.Out.Len())
	assert.Equal(t, byte(7+4999%256), out.Out.Bytes()[4999])

	first := &out.Out.Bytes()[0]
	var there, home taskIn
	assert.Equal(t, 1, send(t, p.parent, p.child, taskIn{In: out.Out}, &there), "lent to the worker like any Buffer of the parent's")
	assert.Zero(t, send(t, p.child, p.parent, taskIn{In: there.In}, &home))
	assert.Same(t, first, &home.In.Bytes()[0], "moved there and back, not copied")

	// The worker dies before it reads a call: the parent decodes the
	// call itself, and has its Buffer back.
	data, _, err := p.parent.Marshal(taskIn{In: home.In})
	require.NoError(t, err)
	var retaken taskIn
	require.NoError(t, p.parent.Unmarshal(data, &retaken))
	assert.Same(t, first, &retaken.In.Bytes()[0])

	retaken.In.Release()
	assert.Zero(t, p.parentArena.stats().InUse)
	assert.Nil(t, p.parent.DrainReleases(), "no release goes to the worker")
}

// giveOne makes a Buffer of n bytes in the worker's arena and gives it away
// on the worker's Peer, returning the message and the given segment, its
// descriptor the caller's.
func giveOne(t *testing.T, p *pair, n int) ([]byte, Segment) {
	t.Helper()
	data, segs, err := p.child.Marshal(taskIn{In: arenaBuffer(t, p.childArena, n, 1)})
	require.NoError(t, err)
	require.Len(t, segs, 1)
	require.True(t, segs[0].Given)
	return data, segs[0]
}

func TestPeerParentRefusesBadGifts(t *testing.T) {
	// Not parallel: counts the process's descriptors.
	p := newPair(t)
	fdsBefore, _ := countFDs(t)
	mapsBefore := countMappings(t)
	dup := func(fd int) int {
		d, err := unix.Dup(fd)
		require.NoError(t, err)
		return d
	}
	_, seg := giveOne(t, p, 3*pageSize)
	for _, size := range []int{seg.Size - 1, 3 * pageSize, pageSize / 2} {
		require.ErrorIs(t, p.parent.Adopt(seg.ID, dup(seg.FD), size), ErrBadSegment, "size %d is no segment's", size)
	}
	require.NoError(t, p.parent.Adopt(seg.ID, dup(seg.FD), seg.Size))
	require.ErrorIs(t, p.parent.Adopt(seg.ID, dup(seg.FD), seg.Size), ErrBadSegment, "already adopted")

	ref := func(r Ref) []byte { return appendRef(nil, r) }
	for name, r := range map[string]Ref{
		"not at the start":     {Segment: seg.ID, Offset: 1, Length: 1},
		"longer than the file": {Segment: seg.ID, Length: uint64(seg.Size) + 1},
	} {
		var got taskIn
		require.ErrorIs(t, p.parent.Unmarshal(rawRef(t, ref(r)), &got), ErrBadRef, name)
		assert.Zero(t, p.parent.Stats().Adopted, "%s: a failed Decode drops what it did not take over", name)
		require.NoError(t, p.parent.Adopt(seg.ID, dup(seg.FD), seg.Size))
	}

	// Two references to one given segment: the first takes it over, the
	// second fails, and the first is released again.
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	require.NoError(t, enc.EncodeArrayLen(2))
	for range 2 {
		require.NoError(t, enc.EncodeExtHeader(extID, refSize))
		_, err := enc.Writer().Write(ref(Ref{Segment: seg.ID, Length: 10}))
		require.NoError(t, err)
	}
	var list []*Buffer
	require.ErrorIs(t, p.parent.Unmarshal(buf.Bytes(), &list), ErrBadRef)
	assert.True(t, list[0].Detached())
	assert.Zero(t, p.parentArena.stats().InUse)

	// At most maxGiven wait for their Decode; Close destroys them.
	for i := range maxGiven {
		require.NoError(t, p.parent.Adopt(SegmentID{Arena: seg.ID.Arena, Index: uint32(1000 + i)}, dup(seg.FD), seg.Size))
	}
	require.ErrorIs(t, p.parent.Adopt(SegmentID{Arena: seg.ID.Arena, Index: 999}, dup(seg.FD), seg.Size), ErrBadSegment)
	require.NoError(t, p.parent.Close())
	unix.Close(seg.FD)
	p.parentArena.close() // the segment the bad message took over, kept for reuse
	fdsAfter, _ := countFDs(t)
	assert.Equal(t, fdsBefore, fdsAfter, "every descriptor was closed")
	assert.Equal(t, mapsBefore, countMappings(t), "every mapping was undone")
}
