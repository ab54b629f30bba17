package shmbuf

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
)

const (
	// maxFreeBytes bounds the segments an arena keeps for reuse, in bytes
	// of their size, maxFreeSegments their number (each holds a file
	// descriptor), and maxFreePerClass their number in one size class: a
	// freed segment beyond any of them is unmapped and closed.
	maxFreeBytes    = 256 << 20
	maxFreeSegments = 256
	maxFreePerClass = 32
)

// arena hands out Buffer memory, one shared-memory segment per Buffer: a
// memfd of its own, sized to a power of two of at least a page. A segment
// is what travels to another process, so a worker that is sent a Buffer
// can reach that Buffer's memory and nothing else of this process; a
// worker given a window of a larger segment could grow it with mremap to
// all of it, descriptor or not.
//
// A freed segment is kept mapped for reuse by its size class (within
// maxFreeBytes, maxFreeSegments and maxFreePerClass): creating one costs a memfd_create,
// ftruncate, seals and mmap, and a fresh segment's pages fault in on first
// touch, tens of milliseconds for 44 MiB on a virtualised host, where
// reusing one costs clearing the bytes it handed out (BenchmarkNewBufferRelease
// compares the two). Safe for concurrent use.
type arena struct {
	id uint64 // tells this arena's segments from a peer's

	mu        sync.Mutex
	segs      map[uint32]*segment // every segment, in use or free
	next      uint32              // the next SegmentID.Index to try
	free      [numClasses][]*segment
	freeCount int
	freeBytes int64
	inUse     int64
	closed    bool
}

// numClasses covers sizes from a page to maxSegmentSize.
const numClasses = 41

// segment is one mapped memfd of an arena: the memory of one Buffer at a
// time.
type segment struct {
	id  SegmentID
	fd  int // -1 where segments are heap memory
	mem []byte
	// touched bounds the bytes that may be non-zero: what was handed out
	// (and, once the segment was sent to a peer, all of it), so that reuse
	// clears no more than it must and fresh pages aren't touched early.
	touched int
}

// newArena makes an empty arena.
func newArena() *arena {
	return &arena{id: rand.Uint64() | 1, segs: map[uint32]*segment{}}
}

// processArena is the arena of Handle.Alloc and of every Peer. It is the one
// piece of process-wide state in this package, and it has to be: a Peer
// tells the Buffers it may lend (this process's own) from those it must
// copy first by their arena. It is created on first use, so a program that
// never makes a Buffer maps nothing.
var processArena = sync.OnceValue(newArena)

// classOf returns the size class of n bytes and the size of its segments.
func classOf(n int) (class, size int) {
	size = max(n, pageSize)
	class = bits.Len(uint(size - 1))
	return class, 1 << class
}

// alloc returns a zeroed block of n >= 0 bytes in a segment of its own.
func (a *arena) alloc(n int) (*block, error) {
	if n < 0 || n > maxSegmentSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrInvalidSize, n)
	}
	class, size := classOf(n)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, errors.New("transfer: arena is closed")
	}
	a.inUse += int64(size)
	if k := len(a.free[class]); k > 0 {
		s := a.free[class][k-1]
		a.free[class] = a.free[class][:k-1]
		a.freeCount--
		a.freeBytes -= int64(size)
		a.mu.Unlock()
		clear(s.mem[:s.touched]) // the segment is this block's alone now
		s.touched = n
		return &block{data: s.mem[:n:n], arena: a, seg: s}, nil
	}
	id := a.reserveIDLocked()
	a.mu.Unlock()

	fd, mem, err := createSegment(size)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil && a.closed {
		destroySegment(fd, mem)
		err = errors.New("transfer: arena is closed")
	}
	if err != nil {
		delete(a.segs, id.Index)
		a.inUse -= int64(size)
		return nil, err
	}
	s := a.segs[id.Index]
	s.fd, s.mem, s.touched = fd, mem, n
	return &block{data: mem[:n:n], arena: a, seg: s}, nil
}

// reserveIDLocked takes the next free segment index and holds it with an
// empty segment until alloc fills it in; a.mu is held.
func (a *arena) reserveIDLocked() SegmentID {
	for a.segs[a.next] != nil { // after 2³² segments, skip those still alive
		a.next++
	}
	s := &segment{id: SegmentID{Arena: a.id, Index: a.next}, fd: -1}
	a.segs[a.next] = s
	a.next++
	return s.id
}

// release gives a block's segment back: to the free list of its class if
// there is room, else to the system.
func (a *arena) release(b *block) {
	s := b.seg
	if b.exposed {
		s.touched = len(s.mem) // a peer could write any of it
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	size := len(s.mem)
	a.inUse -= int64(size)
	class, _ := classOf(size)
	if len(a.free[class]) < maxFreePerClass && a.freeCount < maxFreeSegments && a.freeBytes+int64(size) <= maxFreeBytes {
		a.free[class] = append(a.free[class], s)
		a.freeCount++
		a.freeBytes += int64(size)
		a.mu.Unlock()
		return
	}
	delete(a.segs, s.id.Index)
	a.mu.Unlock()
	destroySegment(s.fd, s.mem)
}

// usage reports the arena's size and use: segments mapped (in use or kept
// for reuse), their total size, and the size of those held by live Buffers
// and Buffers lent to peers, in bytes.
func (a *arena) usage() (segments int, mapped, inUse int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.segs {
		if s.mem != nil { // not one alloc is still creating
			segments++
			mapped += int64(len(s.mem))
		}
	}
	return segments, mapped, a.inUse
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
		if s.mem != nil {
			destroySegment(s.fd, s.mem)
		}
	}
	a.segs = nil
	a.free = [numClasses][]*segment{}
}

// ArenaUsage is the process arena's usage, for transfer.Stats. It creates
// nothing: a process that never allocated a Buffer reports zeroes. Safe
// for concurrent use.
func ArenaUsage() (segments int, mapped, inUse int64) {
	return processArena().usage()
}
