package shmbuf

import (
	"fmt"
)

// maxSegmentSize bounds what Adopt maps, so a hostile size can't reserve
// the address space (the real check is against the memfd's size).
const maxSegmentSize = 1 << 40

// mapping is a peer's segment mapped into this process.
type mapping struct {
	peer *peer
	id   SegmentID
	mem  []byte
	live int // Buffers over it alive here; guarded by peer.mu
}

// Adopt maps a segment the remote side sent (the Segment its Encode
// returned, and the descriptor received with the message) so that the
// references into it can be decoded. Adopt takes ownership of fd. On the
// WorkerSide the segment is lent: Adopt closes fd, on success too (the
// mapping alone keeps the memory), and the segment stays mapped while the
// Buffer over it is live here: until it is released or sent back, or
// Close if no reference to it arrived. On the ParentSide the segment is
// given: Adopt keeps fd, and the Decode that resolves the reference into
// it makes the segment this process's (a size class's size is required);
// a failed Decode or Close destroys those no Decode resolved. Adopt fails
// with ErrBadSegment for a descriptor that isn't a memfd sealed against
// shrinking (a segment that could shrink would turn reads into SIGBUS), is
// smaller than size, or names this process's own arena or a segment already
// adopted; with ErrPeerClosed after Close; with ErrUnsupported where
// segments can't be shared.
func (p *peer) Adopt(id SegmentID, fd int, size int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	switch {
	case p.closed:
		err = ErrPeerClosed
	case !sharedMemory:
		err = ErrUnsupported
	case id.Arena == p.arena.id:
		err = fmt.Errorf("%w: %v is this process's own segment", ErrBadSegment, id)
	case p.maps[id] != nil:
		err = fmt.Errorf("%w: %v is already adopted", ErrBadSegment, id)
	case size <= 0 || size > maxSegmentSize:
		err = fmt.Errorf("%w: size %d", ErrBadSegment, size)
	}
	if err != nil {
		closeFD(fd)
		return err
	}
	if p.side == ParentSide {
		return p.adoptGiftLocked(id, fd, size)
	}
	mem, err := mapPeerSegment(fd, size)
	if err != nil {
		return err
	}
	p.maps[id] = &mapping{peer: p, id: id, mem: mem}
	return nil
}

// resolve turns a reference from the peer into a block.
func (p *peer) resolve(ref Ref) (*block, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrPeerClosed
	}
	if ref.Segment.Arena == p.arena.id {
		blk, ok := p.lent[ref]
		if !ok {
			return nil, fmt.Errorf("%w: %+v was not lent to this peer", ErrBadRef, ref)
		}
		delete(p.lent, ref)
		delete(p.sent, ref.Segment) // the peer unmapped it as it sent it back
		return blk, nil
	}
	if p.side == ParentSide {
		return p.takeOverLocked(ref)
	}
	m := p.maps[ref.Segment]
	if m == nil {
		return nil, fmt.Errorf("%w: segment %v was not adopted", ErrBadRef, ref.Segment)
	}
	size := uint64(len(m.mem))
	if ref.Offset > size || ref.Length > size-ref.Offset {
		return nil, fmt.Errorf("%w: %+v is outside its segment of %d bytes", ErrBadRef, ref, size)
	}
	if p.held[ref] {
		return nil, fmt.Errorf("%w: %+v is already held", ErrBadRef, ref)
	}
	p.held[ref] = true
	m.live++
	end := ref.Offset + ref.Length
	return &block{data: m.mem[ref.Offset:end:end], remote: m, ref: ref}, nil
}

// releaseRemote is Buffer.Release for memory adopted from this peer: the
// release is queued for the owner.
func (p *peer) releaseRemote(blk *block) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forgetLocked(blk, true)
}

// forgetLocked drops a remote block held here, queueing its release for
// the owner if report is set and the peer is open, and unmaps its segment
// once no Buffer over it is live here: nothing in this process may reach
// memory it no longer holds; p.mu is held.
func (p *peer) forgetLocked(blk *block, report bool) {
	delete(p.held, blk.ref)
	m := blk.remote
	m.live--
	if report && !p.closed {
		p.releases = append(p.releases, blk.ref)
	}
	if m.live == 0 && m.mem != nil {
		unmapPeerSegment(m.mem)
		m.mem = nil
		if p.maps[m.id] == m {
			delete(p.maps, m.id)
		}
	}
}

// DrainReleases returns, and forgets, the references to the remote side's
// memory that were released here since the last call. The caller sends
// them to the remote side, which passes them to its ApplyReleases; the pool
// piggybacks them on its next message (a task, a result). Returns nil when
// there is nothing to report, and after Close.
func (p *peer) DrainReleases() []Ref {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.releases
	p.releases = nil
	return r
}

// ApplyReleases frees this process's Buffers that the remote side reports
// released (its DrainReleases). References that weren't lent to this peer
// are skipped and reported in an error matching ErrBadRef; the rest are
// freed anyway.
func (p *peer) ApplyReleases(refs []Ref) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrPeerClosed
	}
	var freed []*block
	unknown := 0
	for _, ref := range refs {
		blk, ok := p.lent[ref]
		if !ok {
			unknown++
			continue
		}
		delete(p.lent, ref)
		delete(p.sent, ref.Segment) // the peer unmapped it as it released it
		freed = append(freed, blk)
	}
	p.mu.Unlock()
	for _, blk := range freed {
		blk.free()
	}
	if unknown > 0 {
		return fmt.Errorf("%w: %d of %d released references were not lent to this peer", ErrBadRef, unknown, len(refs))
	}
	return nil
}

// Close ends the Peer once the remote process is gone (it exited, was
// killed, or can no longer touch the memory for another reason): call it
// after reaping the worker, not before, or the worker could still write
// into segments that are being reused. Close frees every Buffer still lent
// to the remote side, forgets pending releases, and unmaps every adopted
// segment — at once if no Buffer over it is live here, otherwise when the
// last such Buffer is released (memfd memory outlives its creator, so
// those Buffers stay valid) — and destroys the given segments no Decode
// resolved. Idempotent; always returns nil.
func (p *peer) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	lent := p.lent
	p.lent = nil
	p.releases = nil
	for id, m := range p.maps {
		if m.live == 0 {
			unmapPeerSegment(m.mem)
			m.mem = nil
		}
		delete(p.maps, id)
	}
	p.dropGiftsLocked()
	p.mu.Unlock()
	for _, blk := range lent {
		blk.free()
	}
	return nil
}

// Stats reports the Peer's books. Safe for concurrent use.
func (p *peer) Stats() PeerStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := PeerStats{Lent: len(p.lent), Adopted: len(p.maps) + len(p.given), Held: len(p.held), Releases: len(p.releases)}
	for _, blk := range p.lent {
		st.LentBytes += int64(len(blk.data))
	}
	return st
}
