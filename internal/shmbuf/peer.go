package shmbuf

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// peer is this process's end of the Buffer traffic with one other process
// (in the pool: one per worker connection, on both sides). Sending a value
// through Encode moves the Buffers in it: the receiver gets a reference
// into the Buffer's shared segment instead of the bytes, and the segment's
// descriptor travels with it. The Peer keeps the books that make this safe:
//
//   - on the ParentSide, which of this process's segments the remote side
//     has mapped now, and which of this process's Buffers are lent to it,
//     so they can be freed when it releases them (ApplyReleases) or dies
//     (Close); and which segments it gave are waiting for their Decode;
//   - on the WorkerSide, which of the remote side's segments are mapped
//     here (Adopt), and which Buffers over them are live here, so that
//     their releases travel back (DrainReleases) and the mappings go away
//     with them.
//
// Each Buffer has a segment of its own, and a segment is mapped on the
// remote side only while the Buffer it holds is there: adopted with the
// message that carries it, unmapped when that Buffer is released or sent
// back. So a process reaches the Buffers it was sent and holds, never
// another Buffer of the sender's, however far it writes past its own; a
// segment coming back is sent again the next time it leaves.
//
// Either side can allocate, each in its own arena, and neither ever
// allocates in the other's memory (which would need a cross-process
// allocator and would let a dying worker corrupt the parent's free
// lists). The two sides differ in what happens to a segment they send
// (see Side): the parent lends its own, which stay in its arena; the
// worker gives its own away, unmapping them and passing their descriptors
// on, and the parent takes them into its arena (Adopt keeps the
// descriptor; Decode makes the segment the parent's under an index of
// its own). So every Buffer that reaches the parent is the parent's, a
// worker reaches only the Buffers it holds now, and releases travel one
// way only, from the worker to the parent. A Buffer that goes back to the
// process that lent its segment travels as a reference too and simply
// becomes that process's Buffer again: the same memory, not a copy.
//
// Every method is safe for concurrent use. After Close every method fails
// with ErrPeerClosed (Adopt still closes the descriptor it is given).
// Use NewPeer; the zero Peer is not usable.
type peer struct {
	arena *arena
	side  Side

	mu       sync.Mutex
	closed   bool
	sent     map[SegmentID]bool     // local segments the remote has mapped
	lent     map[Ref]*block         // local blocks the remote holds
	maps     map[SegmentID]*mapping // remote segments mapped here
	held     map[Ref]bool           // remote blocks live here
	releases []Ref                  // remote blocks released here, to report
	given    map[SegmentID]*gift    // ParentSide: segments given, not taken over yet
}

// NewPeer returns this side's Peer of a new connection between a parent
// and a worker process, over the process arena.
func NewPeer(side Side) Peer { return newPeer(processArena(), side) }

func newPeer(a *arena, side Side) *peer {
	return &peer{
		arena: a,
		side:  side,
		sent:  map[SegmentID]bool{},
		lent:  map[Ref]*block{},
		maps:  map[SegmentID]*mapping{},
		held:  map[Ref]bool{},
		given: map[SegmentID]*gift{},
	}
}

// Encode writes v with enc and moves every Buffer in it to the remote side:
// each is written as a reference (msgpack extension ExtID), its handle in v
// is detached, and its memory is lent to the peer until the peer releases
// it (ParentSide) or given to the peer for good (WorkerSide: unmapped
// here, its segment's descriptor the caller's). A Buffer made by Move, or
// received from a different peer, is first copied into this process's
// arena (once). Encode returns the segments the message references that
// the peer hasn't mapped: the caller must send their descriptors with the
// message, in order, then close the given ones (CloseGiven), and the peer
// must Adopt them before it Decodes the message. If the message can't be
// delivered after all, the connection is broken: Close the Peer (and
// CloseGiven the segments: the memory in them is lost with the message).
//
// Encode first checks v as Check does, so a value that can't cross fails
// with ErrNotTransferable (or ErrDetached) before anything is written or
// detached; if encoding fails, v's Buffers are restored as they were. Plain
// values without Buffers cost the encoding and a cached type lookup.
// Safe for concurrent use, but not with other writes to enc.
func (p *peer) Encode(enc *msgpack.Encoder, v any) ([]Segment, error) {
	rv, done, err := encodePlain(enc, v)
	if done {
		return nil, err
	}
	var moves []outbound
	rollback := func() {
		for _, m := range moves {
			m.undo()
		}
	}
	w := rewriter{
		replace: func(old, wire *Handle) error {
			m, err := p.prepare(old)
			if err != nil {
				return err
			}
			moves = append(moves, m)
			wire.own(m.send)
			wire.wire = wireRef
			return nil
		},
	}
	out, err := w.rewrite(rv)
	if err == nil {
		err = enc.Encode(out.Interface())
	}
	if err != nil {
		rollback()
		return nil, err
	}
	segs, err := p.commit(moves)
	if err != nil {
		rollback()
		return nil, err
	}
	return segs, nil
}

// encodePlain is what both kinds of Peer do first in Encode: it writes v
// with enc if v holds no Buffer (done), or fails if v can't cross (done,
// with the error, as Check would), else returns v's reflect.Value for
// the Peer to rewrite.
func encodePlain(enc *msgpack.Encoder, v any) (rv reflect.Value, done bool, err error) {
	if v == nil {
		return rv, true, enc.Encode(nil)
	}
	rv = reflect.ValueOf(v)
	info := infoOf(rv.Type())
	if info.bad != "" {
		return rv, true, fmt.Errorf("%w: %s", ErrNotTransferable, info.bad)
	}
	if !info.holds {
		return rv, true, enc.Encode(v)
	}
	if err := Check(v); err != nil {
		return rv, true, err
	}
	return rv, false, nil
}

// outbound is one Buffer on its way out of Encode: the handle it came
// from, the block it owned, and the block actually sent (a copy in the
// arena when the original can't be referenced).
type outbound struct {
	old        *Handle
	orig, send *block
}

// undo gives the handle its memory back.
func (m outbound) undo() {
	if m.send != m.orig {
		m.send.free()
	}
	m.old.own(m.orig)
}

// prepare takes b's block and finds the block to send for it.
func (p *peer) prepare(b *Handle) (outbound, error) {
	if !sharedMemory {
		return outbound{}, ErrUnsupported
	}
	blk, err := b.take()
	if err != nil {
		return outbound{}, err
	}
	m := outbound{old: b, orig: blk, send: blk}
	local := blk.arena == p.arena
	returning := blk.remote != nil && blk.remote.peer == p
	if !local && !returning {
		cp, err := p.arena.alloc(len(blk.data))
		if err != nil {
			b.own(blk)
			return outbound{}, err
		}
		copy(cp.data, blk.data)
		m.send = cp
	}
	return m, nil
}

// commit records the moves of a successfully encoded message and returns
// the segments the peer still needs.
func (p *peer) commit(moves []outbound) ([]Segment, error) {
	var segs []Segment
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrPeerClosed
	}
	var originals, gifts []*block
	for _, m := range moves {
		if m.orig != m.send {
			originals = append(originals, m.orig)
		}
		if m.send.remote != nil { // back to its owner: forget it, report nothing
			p.forgetLocked(m.send, false)
			continue
		}
		if p.side == WorkerSide {
			gifts = append(gifts, m.send)
			continue
		}
		p.lent[m.send.localRef()] = m.send
		m.send.exposed = true
		if seg := m.send.seg; !p.sent[seg.id] {
			p.sent[seg.id] = true
			segs = append(segs, Segment{ID: seg.id, FD: seg.fd, Size: len(seg.mem)})
		}
	}
	p.mu.Unlock()
	for _, blk := range gifts {
		id := blk.seg.id
		fd, size := p.arena.giveAway(blk)
		segs = append(segs, Segment{ID: id, FD: fd, Size: size, Given: true})
	}
	// Outside p.mu: an original from another peer releases through that
	// peer's lock.
	for _, blk := range originals {
		blk.free()
	}
	return segs, nil
}

// Decode reads into v (a pointer, as for msgpack) with dec, and turns every
// Buffer reference in the message into a live Buffer: one over a segment
// adopted from the peer, or — for a Buffer this process lent out — the
// original memory back. Decode into zero values: a live Buffer in v where a
// reference arrives is an error.
//
// Hostile input is an error, never a panic or an access out of bounds: a
// malformed extension payload, a reference to a segment not adopted, one
// outside its segment, one held twice, or one to this process's memory that
// was never lent to this peer all fail with ErrBadRef; on the ParentSide a
// reference into a given segment resolves only at its start, and only
// once. On any error every Buffer the message did resolve is released
// again (so its memory isn't leaked) and the given segments no reference
// resolved are destroyed; the references after a corrupt spot can't be
// read, so a peer that sends a corrupt message should be closed. dec
// should come from NewDecoder and the bytes should have passed
// ValidateMessage (Unmarshal does both): the stock decoder trusts the
// lengths a message claims.
// Safe for concurrent use, but not with other reads of dec.
func (p *peer) Decode(dec *msgpack.Decoder, v any) error {
	err := dec.Decode(v)
	rv := reflect.ValueOf(v)
	if v == nil || !infoOf(rv.Type()).holds {
		return err
	}
	var resolved []*Handle
	_ = visit(rv, false, func(b *Handle) error {
		if b.inline != nil {
			b.inline = nil
			err = firstErr(err, fmt.Errorf("%w: a copied Buffer on a shared-memory link", ErrBadRef))
			return nil
		}
		if b.pending == nil {
			return nil
		}
		ref := *b.pending
		b.pending = nil
		blk, rerr := p.resolve(ref)
		if rerr != nil {
			err = firstErr(err, rerr)
			return nil
		}
		b.own(blk)
		resolved = append(resolved, b)
		return nil
	})
	if err != nil {
		for _, b := range resolved {
			b.Release()
		}
		p.dropGifts()
		return err
	}
	return nil
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Marshal is Encode into a fresh byte slice with a default encoder.
func (p *peer) Marshal(v any) ([]byte, []Segment, error) {
	var buf bytes.Buffer
	segs, err := p.Encode(msgpack.NewEncoder(&buf), v)
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), segs, nil
}

// Unmarshal is Decode from data with NewDecoder, after ValidateMessage.
func (p *peer) Unmarshal(data []byte, v any) error {
	if err := ValidateMessage(data); err != nil {
		return err
	}
	return p.Decode(NewDecoder(bytes.NewReader(data)), v)
}
