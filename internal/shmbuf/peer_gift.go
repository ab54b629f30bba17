package shmbuf

import "fmt"

// maxGiven bounds the segments a ParentSide Peer holds given and not yet
// taken over, so that a worker sending segments no message names can't
// pile up descriptors and mappings in its parent: a message references at
// most this many (one frame's descriptors), and Decode takes over or
// drops them.
const maxGiven = 128

// gift is a segment the worker gave, adopted with its message and waiting
// for the Decode that takes it over.
type gift struct {
	fd  int
	mem []byte
}

// adoptGiftLocked is Adopt on the ParentSide: it maps the segment and keeps
// its descriptor, for resolve to take it over; p.mu is held, and the
// checks common to both sides are done.
func (p *peer) adoptGiftLocked(id SegmentID, fd, size int) error {
	var err error
	switch {
	case p.given[id] != nil:
		err = fmt.Errorf("%w: %v is already adopted", ErrBadSegment, id)
	case !isClassSize(size):
		err = fmt.Errorf("%w: size %d is not a segment size", ErrBadSegment, size)
	case len(p.given) >= maxGiven:
		err = fmt.Errorf("%w: more than %d segments given and not decoded", ErrBadSegment, maxGiven)
	}
	if err != nil {
		closeFD(fd)
		return err
	}
	mem, err := mapSegment(fd, size)
	if err != nil {
		closeFD(fd)
		return err
	}
	p.given[id] = &gift{fd: fd, mem: mem}
	return nil
}

// takeOverLocked is resolve on the ParentSide for a reference into a
// segment the worker gave: the segment becomes this process's, in its
// arena, and the Buffer an ordinary one of this process; p.mu is held.
// Only a whole Buffer's reference (offset 0, as a Peer's Encode writes)
// resolves, and only once.
func (p *peer) takeOverLocked(ref Ref) (*block, error) {
	g := p.given[ref.Segment]
	if g == nil {
		return nil, fmt.Errorf("%w: segment %v was not adopted", ErrBadRef, ref.Segment)
	}
	if ref.Offset != 0 || ref.Length > uint64(len(g.mem)) {
		return nil, fmt.Errorf("%w: %+v is not a Buffer of its segment of %d bytes", ErrBadRef, ref, len(g.mem))
	}
	delete(p.given, ref.Segment)
	return p.arena.takeOver(g.fd, g.mem, int(ref.Length))
}

// dropGiftsLocked destroys the given segments no Decode took over; p.mu
// is held.
func (p *peer) dropGiftsLocked() {
	for id, g := range p.given {
		destroySegment(g.fd, g.mem)
		delete(p.given, id)
	}
}

// dropGifts is dropGiftsLocked for a Decode that failed: the references
// past the failure can't be read, so their segments would never be taken
// over.
func (p *peer) dropGifts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropGiftsLocked()
}
