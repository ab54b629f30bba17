package shmbuf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
)

const (
	// defaultSegmentSize is the size of the shared-memory segments the
	// arena grows by. A request larger than this gets a dedicated segment
	// of its own size rounded up to whole pages.
	defaultSegmentSize = 64 << 20

	// allocAlign keeps every Buffer cache-line aligned, so two Buffers never
	// share a line that two processes would then fight over.
	allocAlign = 64
)

// arena hands out Buffer memory from shared segments. A segment is mapped
// once and never unmapped while the arena lives: reusing space that is
// already mapped, in this process and in every peer that was sent the
// segment, is what makes a move cheap (a fresh mapping of 44 MiB costs tens
// of milliseconds on a virtualised host, a reused one nothing). So an arena
// holds its peak size until it is closed. Safe for concurrent use.
type arena struct {
	id          uint64 // tells this arena's segments from a peer's
	segmentSize int

	mu     sync.Mutex
	segs   []*segment // index = SegmentID.Index
	inUse  int64
	closed bool
}

// segment is one mapped memfd of an arena.
type segment struct {
	id   SegmentID
	fd   int // -1 where segments are heap memory
	mem  []byte
	free freeList
	// touched is the high-water mark of space ever handed out: memory
	// above it is still the zeroes ftruncate gave, so only space below it
	// needs clearing on reuse (and fresh pages aren't touched early).
	touched int
}

// newArena makes an empty arena whose segments are segmentSize bytes.
func newArena(segmentSize int) *arena {
	return &arena{id: rand.Uint64() | 1, segmentSize: segmentSize}
}

// processArena is the arena of Handle.Alloc and of every Peer. It is the one
// piece of process-wide state in this package, and it has to be: a segment
// is sent once to each peer and then referenced by every Buffer carved from
// it, so all Buffers of a process must come from the same segments. It is
// created on first use, so a program that never makes a Buffer maps nothing.
var processArena = sync.OnceValue(func() *arena { return newArena(defaultSegmentSize) })

// alloc returns a zeroed block of n >= 0 bytes, growing the arena by a
// segment when no free span fits.
func (a *arena) alloc(n int) (*block, error) {
	size := max((n+allocAlign-1)&^(allocAlign-1), allocAlign)
	if n < 0 || size < n { // overflow
		return nil, fmt.Errorf("%w: %d bytes", ErrInvalidSize, n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errors.New("transfer: arena is closed")
	}
	for _, s := range a.segs {
		if off, ok := s.free.take(size); ok {
			return a.carve(s, off, size, n), nil
		}
	}
	segSize := a.segmentSize
	if size > segSize {
		segSize = (size + pageSize - 1) &^ (pageSize - 1)
	}
	fd, mem, err := createSegment(segSize)
	if err != nil {
		return nil, err
	}
	s := &segment{id: SegmentID{Arena: a.id, Index: uint32(len(a.segs))}, fd: fd, mem: mem}
	s.free.put(0, segSize)
	a.segs = append(a.segs, s)
	off, _ := s.free.take(size)
	return a.carve(s, off, size, n), nil
}

// carve makes the block for [off, off+size) of s; a.mu is held.
func (a *arena) carve(s *segment, off, size, n int) *block {
	if off < s.touched {
		clear(s.mem[off:min(off+size, s.touched)])
	}
	s.touched = max(s.touched, off+size)
	a.inUse += int64(size)
	return &block{data: s.mem[off : off+n : off+n], arena: a, seg: s, off: off, size: size}
}

// release gives a block's space back.
func (a *arena) release(b *block) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	b.seg.free.put(b.off, b.size)
	a.inUse -= int64(b.size)
}

// usage reports the arena's size and use: segments mapped, their total
// size, and the space held by live Buffers and Buffers lent to peers
// (rounded up to the allocation alignment), in bytes.
func (a *arena) usage() (segments int, mapped, inUse int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.segs {
		mapped += int64(len(s.mem))
	}
	return len(a.segs), mapped, a.inUse
}

// close unmaps every segment. Only tests close arenas: the process arena
// lives as long as the process, since peers and Buffers may reference it.
func (a *arena) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	for _, s := range a.segs {
		destroySegment(s.fd, s.mem)
	}
	a.segs = nil
}

// ArenaUsage is the process arena's usage, for transfer.Stats. It creates
// nothing: a process that never allocated a Buffer reports zeroes. Safe
// for concurrent use.
func ArenaUsage() (segments int, mapped, inUse int64) {
	return processArena().usage()
}
