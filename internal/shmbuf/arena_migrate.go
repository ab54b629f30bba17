package shmbuf

import "errors"

// A segment can leave one process's arena for another's: a worker gives
// the segment of a Buffer it sends to its parent away (giveAway), and the
// parent takes it into its own arena (takeOver), so that the Buffer is the
// parent's like any it made, and the worker keeps neither a mapping nor a
// descriptor through which a later task could reach it.

// giveAway removes blk's segment from the arena and unmaps it, and returns
// its descriptor, which is the caller's from then on: after this, nothing
// in this process reaches the segment but that descriptor. blk is
// unusable afterwards.
func (a *arena) giveAway(blk *block) (fd, size int) {
	s := blk.seg
	size = len(s.mem)
	a.mu.Lock()
	if !a.closed {
		delete(a.segs, s.id.Index)
		a.inUse -= int64(size)
	}
	a.mu.Unlock()
	unmapPeerSegment(s.mem)
	s.mem = nil
	blk.data = nil
	return s.fd, size
}

// takeOver makes a segment a peer gave (fd, mapped at mem, whose size is
// a size class's) a segment of this arena, under an index of its own,
// and returns a block of its first n bytes. The arena owns fd and mem
// from then on, on failure too (it destroys them).
func (a *arena) takeOver(fd int, mem []byte, n int) (*block, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		destroySegment(fd, mem)
		return nil, errors.New("transfer: arena is closed")
	}
	id := a.reserveIDLocked()
	s := a.segs[id.Index]
	s.fd, s.mem, s.touched = fd, mem, len(mem) // the giver may have written any of it
	a.inUse += int64(len(mem))
	return &block{data: mem[:n:n], arena: a, seg: s, exposed: true}, nil
}

// isClassSize reports whether size is a segment size the arena makes (a
// power of two of at least a page), so a segment taken over fits its size
// class's free list.
func isClassSize(size int) bool {
	if size < pageSize || size > maxSegmentSize {
		return false
	}
	_, classSize := classOf(size)
	return classSize == size
}
