package shmbuf

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/sys/unix"

	"github.com/offloadgo/offload/internal/testkit"
)

// pair is two "processes" in one: each side has its own arena and its
// Peer for the other, and descriptors are passed by dup, as SCM_RIGHTS
// would.
type pair struct {
	parentArena, childArena *arena
	parent, child           *peer
}

func newPair(t testing.TB) *pair {
	t.Helper()
	p := &pair{parentArena: newArena(), childArena: newArena()}
	p.parent, p.child = newPeer(p.parentArena, ParentSide), newPeer(p.childArena, WorkerSide)
	t.Cleanup(func() {
		p.parent.Close()
		p.child.Close()
		p.parentArena.close()
		p.childArena.close()
	})
	return p
}

// send encodes v on from, adopts the segments on to, decodes into out, and
// returns how many segments travelled. The descriptors travel by dup, and
// the sender closes those it gave, as the pool does after sending.
func send(t *testing.T, from, to *peer, v, out any) int {
	t.Helper()
	data, segs, err := from.Marshal(v)
	require.NoError(t, err)
	for _, s := range segs {
		fd, err := unix.Dup(s.FD)
		require.NoError(t, err)
		require.NoError(t, to.Adopt(s.ID, fd, s.Size))
	}
	CloseGiven(segs)
	require.NoError(t, to.Unmarshal(data, out))
	return len(segs)
}

func arenaBuffer(t testing.TB, a *arena, n int, seed byte) *Buffer {
	t.Helper()
	blk, err := a.alloc(n)
	require.NoError(t, err)
	for i := range blk.data {
		blk.data[i] = seed + byte(i)
	}
	return newHandle(blk)
}

func TestPeerMoveAndReturn(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	b := arenaBuffer(t, p.parentArena, 1000, 1)
	first := &b.Bytes()[0]

	var in taskIn
	segs := send(t, p.parent, p.child, taskIn{In: b, Name: "job"}, &in)
	assert.Equal(t, 1, segs, "the segment travels with the first message")
	assert.True(t, b.Detached(), "the sender's handle is detached")
	assert.Equal(t, 1, p.parent.Stats().Lent)
	require.False(t, in.In.Detached())
	assert.Equal(t, "job", in.Name)
	assert.Equal(t, byte(1), in.In.Bytes()[0])
	in.In.Bytes()[0] = 200 // the child writes the parent's memory: shared, not copied
	assert.Equal(t, byte(200), *first)

	sum := 0
	for _, c := range in.In.Bytes() {
		sum += int(c)
	}
	result := taskOut{Back: in.In, Out: arenaBuffer(t, p.childArena, 10, 5), Sum: sum}
	var out taskOut
	assert.Equal(t, 1, send(t, p.child, p.parent, result, &out), "the child's segment travels back")
	assert.True(t, in.In.Detached())
	assert.Zero(t, p.child.Stats().Held)
	assert.Zero(t, p.child.Stats().Adopted, "the child unmapped the parent's Buffer as it sent it back")

	assert.Same(t, first, &out.Back.Bytes()[0], "the parent's Buffer came home")
	assert.Zero(t, p.parent.Stats().Lent)
	assert.Equal(t, byte(5), out.Out.Bytes()[0])
	assert.Equal(t, sum, out.Sum)

	// Each Buffer has a segment of its own, which travels with it each
	// time it leaves, and is unmapped where it was when it is released.
	var in2 taskIn
	assert.Equal(t, 1, send(t, p.parent, p.child, taskIn{In: arenaBuffer(t, p.parentArena, 10, 0)}, &in2))
	assert.Equal(t, 1, p.child.Stats().Adopted)
	in2.In.Release()
	assert.Zero(t, p.child.Stats().Adopted)
	require.NoError(t, p.parent.ApplyReleases(p.child.DrainReleases()))
	var again taskIn
	assert.Equal(t, 1, send(t, p.parent, p.child, taskIn{In: out.Back}, &again), "a segment that came back is sent again")
	var home taskIn
	assert.Zero(t, send(t, p.child, p.parent, taskIn{In: again.In}, &home))
	assert.Same(t, first, &home.In.Bytes()[0], "moved there and back, not copied")
	out.Back = home.In

	// The child gave its Buffer away: it is the parent's, freed here.
	assert.Zero(t, p.childArena.stats().InUse, "the child keeps nothing of what it sent")
	assert.Zero(t, p.parent.Stats().Adopted)
	out.Out.Release()
	assert.Nil(t, p.parent.DrainReleases(), "no release goes to the child")

	out.Back.Release()
	assert.Zero(t, p.parentArena.stats().InUse)
	assert.Zero(t, p.child.Stats().Adopted, "every segment was unmapped with its Buffer")
}

func TestPeerMoveCopiesHeapIntoArenaOnce(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	b := Move([]byte("ordinary memory"))
	var in taskIn
	send(t, p.parent, p.child, taskIn{In: b}, &in)
	assert.True(t, b.Detached())
	assert.Equal(t, "ordinary memory", string(in.In.Bytes()))
	assert.NotZero(t, p.parentArena.stats().InUse, "copied into the arena")
	in.In.Release()
	require.NoError(t, p.parent.ApplyReleases(p.child.DrainReleases()))
	assert.Zero(t, p.parentArena.stats().InUse)
	assert.Zero(t, p.child.Stats().Adopted, "every segment was unmapped with its Buffer")
}

func TestPeerForwardsAForeignBufferByCopy(t *testing.T) {
	t.Parallel()
	p, q := newPair(t), newPair(t)
	var in taskIn
	send(t, p.parent, p.child, taskIn{In: arenaBuffer(t, p.parentArena, 10, 3)}, &in)
	// The child of p forwards what it borrowed from p.parent to another
	// peer.
	var fwd taskIn
	forwarder := newPeer(p.childArena, WorkerSide) // the same process, another connection
	t.Cleanup(func() { forwarder.Close() })
	send(t, forwarder, q.parent, taskIn{In: in.In}, &fwd)
	assert.Equal(t, byte(3), fwd.In.Bytes()[0])
	assert.Len(t, p.child.DrainReleases(), 1, "the original went back to its owner")
	fwd.In.Release()
}

func TestPeerCloseFreesLentAndUnmaps(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	var held []taskIn
	for i := range 3 {
		var in taskIn
		send(t, p.parent, p.child, taskIn{In: arenaBuffer(t, p.parentArena, 100, byte(i))}, &in)
		held = append(held, in)
	}
	assert.Equal(t, 3, p.parent.Stats().Lent)
	// The child "dies" holding all three.
	require.NoError(t, p.parent.Close())
	assert.Zero(t, p.parentArena.stats().InUse, "Close frees what the dead peer held")
	require.NoError(t, p.parent.Close(), "idempotent")
	// (Of another size class, so as not to reuse a segment the child
	// reads below: a dead child can't.)
	_, _, err := p.parent.Marshal(taskIn{In: arenaBuffer(t, p.parentArena, 2*pageSize, 0)})
	require.ErrorIs(t, err, ErrPeerClosed)

	// On the child's side, Buffers stay readable after Close until released.
	require.NoError(t, p.child.Close())
	assert.Equal(t, byte(2), held[2].In.Bytes()[0])
	for _, in := range held {
		in.In.Release()
	}
	assert.Nil(t, p.child.DrainReleases())
	assert.Zero(t, p.child.Stats().Held)
}

func TestPeerEncodeRejectsAndRestores(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	live := arenaBuffer(t, p.parentArena, 8, 1)
	dead := arenaBuffer(t, p.parentArena, 8, 1)
	dead.Release()
	type withChan struct {
		B *Buffer
		C chan int
	}
	cases := []struct {
		name string
		v    any
		want error
	}{
		{"detached", []*Buffer{live, dead}, ErrDetached},
		{"chan", withChan{B: live}, ErrNotTransferable},
		{"func", func() {}, ErrNotTransferable},
		{"aliased", []*Buffer{live, live}, ErrNotTransferable},
	}
	for _, tc := range cases {
		_, _, err := p.parent.Marshal(tc.v)
		require.ErrorIs(t, err, tc.want, tc.name)
		assert.False(t, live.Detached(), "%s: nothing was detached", tc.name)
	}
	assert.Zero(t, p.parent.Stats().Lent)

	_, err := msgpack.Marshal(taskIn{In: live})
	require.ErrorIs(t, err, ErrNoPeer, "plain msgpack can't leak a reference")
	assert.False(t, live.Detached())
	live.Release()
}

// rawRef encodes a message {In: ext(payload)} by hand.
func rawRef(t testing.TB, payload []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	require.NoError(t, enc.EncodeMapLen(1))
	require.NoError(t, enc.EncodeString("In"))
	require.NoError(t, enc.EncodeExtHeader(extID, len(payload)))
	_, err := enc.Writer().Write(payload)
	require.NoError(t, err)
	return buf.Bytes()
}

func TestPeerDecodeHostileRefs(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	var in taskIn
	send(t, p.parent, p.child, taskIn{In: arenaBuffer(t, p.parentArena, 100, 0)}, &in)
	seg := p.parentArena.segs[0]
	segSize := uint64(len(seg.mem))
	ref := func(r Ref) []byte { return appendRef(nil, r) }
	held := Ref{Segment: seg.id, Offset: 0, Length: 100}
	cases := []struct {
		name    string
		payload []byte
	}{
		{"short payload", []byte{1, 2, 3}},
		{"empty payload", nil},
		{"wrong version", append([]byte{9}, ref(held)[1:]...)},
		{"unknown segment", ref(Ref{Segment: SegmentID{Arena: 12345, Index: 0}, Length: 1})},
		{"unknown index", ref(Ref{Segment: SegmentID{Arena: seg.id.Arena, Index: 7}, Length: 1})},
		{"offset past the end", ref(Ref{Segment: seg.id, Offset: segSize + 1})},
		{"length past the end", ref(Ref{Segment: seg.id, Offset: segSize - 10, Length: 11})},
		{"length overflow", ref(Ref{Segment: seg.id, Offset: 64, Length: ^uint64(0) - 10})},
		{"already held", ref(held)},
		{"own memory never lent", ref(Ref{Segment: p.childArena.segsOrNew(t).id, Length: 1})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got taskIn
			err := p.child.Unmarshal(rawRef(t, tc.payload), &got)
			require.ErrorIs(t, err, ErrBadRef)
			if got.In != nil {
				assert.True(t, got.In.Detached())
			}
		})
	}
	// A message with one good and one bad reference releases the good one.
	in.In.Release()
	require.NoError(t, p.parent.ApplyReleases(p.child.DrainReleases()))
	b1 := arenaBuffer(t, p.parentArena, 10, 0)
	good := b1.blk.Load().localRef()
	_, segs, err := p.parent.Marshal([]*Buffer{b1})
	require.NoError(t, err)
	require.Len(t, segs, 1)
	require.Equal(t, seg.id, segs[0].ID, "the freed segment was reused")
	fd, err := unix.Dup(segs[0].FD)
	require.NoError(t, err)
	require.NoError(t, p.child.Adopt(segs[0].ID, fd, segs[0].Size))
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	require.NoError(t, enc.EncodeArrayLen(2))
	for _, r := range []Ref{good, {Segment: seg.id, Offset: segSize, Length: 1}} {
		require.NoError(t, enc.EncodeExtHeader(extID, refSize))
		_, err = enc.Writer().Write(ref(r))
		require.NoError(t, err)
	}
	var list []*Buffer
	require.ErrorIs(t, p.child.Unmarshal(buf.Bytes(), &list), ErrBadRef)
	assert.True(t, list[0].Detached(), "the good reference was released again")
	assert.Zero(t, p.child.Stats().Held)
	require.NoError(t, p.parent.ApplyReleases(p.child.DrainReleases()))
	assert.Zero(t, p.parent.Stats().Lent, "so the owner got it back")
	require.ErrorIs(t, p.parent.ApplyReleases([]Ref{{Segment: seg.id, Offset: 999}}), ErrBadRef)
}

// segsOrNew returns the arena's first segment, making one if needed.
func (a *arena) segsOrNew(t testing.TB) *segment {
	blk, err := a.alloc(1)
	require.NoError(t, err)
	blk.free()
	return a.segs[0]
}

// countFDs counts the process's descriptors: all, and the memfds of
// segments.
func countFDs(t *testing.T) (all, memfds int) {
	t.Helper()
	return testkit.CountFDs(t, "offload-transfer")
}

func countMappings(t *testing.T) int {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	return strings.Count(string(maps), "offload-transfer")
}

func TestAdoptRejectsBadDescriptors(t *testing.T) {
	// Not parallel: counts the process's descriptors.
	p := newPair(t)
	p.childArena.segsOrNew(t)
	seg := p.parentArena.segsOrNew(t)
	fdsBefore, _ := countFDs(t)
	mapsBefore := countMappings(t)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	w.Close()
	pipeFD, err := unix.Dup(int(r.Fd()))
	require.NoError(t, err)
	r.Close()
	unguardedName, unsealed := unguardedSegment(t)
	dup := func(fd int) int {
		d, err := unix.Dup(fd)
		require.NoError(t, err)
		return d
	}
	cases := []struct {
		name string
		id   SegmentID
		fd   int
		size int
	}{
		{"a pipe", SegmentID{Arena: 1}, pipeFD, 4096},
		{unguardedName, SegmentID{Arena: 2}, dup(unsealed), 4096},
		{"larger than the file", SegmentID{Arena: 3}, dup(seg.fd), len(seg.mem) + 1},
		{"zero size", SegmentID{Arena: 4}, dup(seg.fd), 0},
		{"own segment", p.childArena.segs[0].id, dup(seg.fd), len(seg.mem)},
	}
	unix.Close(unsealed)
	for _, tc := range cases {
		err := p.child.Adopt(tc.id, tc.fd, tc.size)
		require.ErrorIs(t, err, ErrBadSegment, tc.name)
	}
	require.NoError(t, p.child.Adopt(seg.id, dup(seg.fd), len(seg.mem)))
	require.ErrorIs(t, p.child.Adopt(seg.id, dup(seg.fd), len(seg.mem)), ErrBadSegment, "already adopted")
	assert.Equal(t, mapsBefore+1, countMappings(t))
	require.NoError(t, p.child.Close())
	require.ErrorIs(t, p.child.Adopt(SegmentID{Arena: 5}, dup(seg.fd), 10), ErrPeerClosed)

	fdsAfter, _ := countFDs(t)
	assert.Equal(t, fdsBefore, fdsAfter, "Adopt closed every descriptor")
	assert.Equal(t, mapsBefore, countMappings(t), "Close unmapped the adopted segment")
}

func TestPeerConcurrentTraffic(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				data, segs, err := p.parent.Marshal(taskIn{In: arenaBuffer(t, p.parentArena, 100, byte(g+i))})
				if !assert.NoError(t, err) || !assert.Len(t, segs, 1) {
					return
				}
				fd, err := unix.Dup(segs[0].FD)
				if !assert.NoError(t, err) || !assert.NoError(t, p.child.Adopt(segs[0].ID, fd, segs[0].Size)) {
					return
				}
				var in taskIn
				if !assert.NoError(t, p.child.Unmarshal(data, &in)) {
					return
				}
				assert.Equal(t, byte(g+i), in.In.Bytes()[0])
				in.In.Release()
				assert.NoError(t, p.parent.ApplyReleases(p.child.DrainReleases()))
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.parent.ApplyReleases(p.child.DrainReleases()))
	assert.Zero(t, p.parent.Stats().Lent)
	assert.Zero(t, p.parentArena.stats().InUse)
	assert.Zero(t, p.child.Stats().Adopted, "every segment was unmapped with its Buffer")
}
