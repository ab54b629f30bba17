package subproc

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/offloadgo/offload/internal/workerproc"
)

// kindMoves, set on a frame's kind, says that the body ends with a moves
// trailer: the segments whose descriptors ride on the frame and the
// releases piggybacked on it. Frames without Buffer traffic don't carry
// the flag and cost nothing extra.
const kindMoves byte = 0x80

// Keep flagged kinds clear of the cancel package's own.
var _ [workerproc.KindReserved - (kindMoves | kindPermanent)]struct{}

// moves is what a frame's trailer says about Buffer traffic.
type moves struct {
	// broken says the books of the two Peers no longer agree: the
	// worker's Peer moved Buffers for an output it could not send (over
	// MaxPayload, too many new segments), or it could not read the call
	// (a bad trailer, an input that did not decode, leaving references
	// unread). The parent retires the worker process after this frame;
	// closing its Peer after the reap frees whatever is still lent.
	broken bool
	// segs describe the frame's descriptors, in order.
	segs []segmentMeta
	// releases are the sender's DrainReleases.
	releases []shmbuf.Ref
}

// segmentMeta is a segment whose descriptor rides on the frame.
type segmentMeta struct {
	id   shmbuf.SegmentID
	size int
}

// The trailer, after the frame's usual body:
//
//	flags    byte (bit 0: broken)
//	nsegs    uvarint, then per segment: arena u64, index u32, size uvarint
//	nrels    uvarint, then per release: arena u64, index u32, offset u64, length u64
//	length   u32 of all the above, so the usual body is what precedes it
//
// All integers are big endian.
const (
	flagBroken    = 1
	segIDSize     = 8 + 4
	releaseSize   = segIDSize + 8 + 8
	trailerLenLen = 4
	// trailerFixed bounds a trailer's size without its releases.
	trailerFixed = 1 + binary.MaxVarintLen64 + workerproc.MaxFDs*(segIDSize+binary.MaxVarintLen64) +
		binary.MaxVarintLen64 + trailerLenLen
)

// maxSegmentBytes bounds a segment's claimed size (Adopt checks it against
// the descriptor itself).
const maxSegmentBytes = 1 << 40

var errCorruptMoves = errors.New("pool: corrupt moves trailer")

// appendMoves appends m's trailer to body.
func appendMoves(body []byte, m moves) []byte {
	start := len(body)
	var flags byte
	if m.broken {
		flags |= flagBroken
	}
	body = append(body, flags)
	body = binary.AppendUvarint(body, uint64(len(m.segs)))
	for _, s := range m.segs {
		body = appendSegmentID(body, s.id)
		body = binary.AppendUvarint(body, uint64(s.size))
	}
	body = binary.AppendUvarint(body, uint64(len(m.releases)))
	for _, r := range m.releases {
		body = appendSegmentID(body, r.Segment)
		body = binary.BigEndian.AppendUint64(body, r.Offset)
		body = binary.BigEndian.AppendUint64(body, r.Length)
	}
	return binary.BigEndian.AppendUint32(body, uint32(len(body)-start))
}

func appendSegmentID(b []byte, id shmbuf.SegmentID) []byte {
	b = binary.BigEndian.AppendUint64(b, id.Arena)
	return binary.BigEndian.AppendUint32(b, id.Index)
}

func segmentIDAt(b []byte) shmbuf.SegmentID {
	return shmbuf.SegmentID{Arena: binary.BigEndian.Uint64(b), Index: binary.BigEndian.Uint32(b[8:])}
}

// splitMoves separates a flagged frame's body from its trailer and checks
// the trailer against the nfds descriptors that came with the frame. It
// reads nothing it didn't check the length of first and allocates no more
// than the body's size justifies.
func splitMoves(body []byte, nfds int) (rest []byte, m moves, err error) {
	if len(body) < trailerLenLen {
		return nil, moves{}, fmt.Errorf("%w: body of %d bytes", errCorruptMoves, len(body))
	}
	n := uint64(binary.BigEndian.Uint32(body[len(body)-trailerLenLen:]))
	if n > uint64(len(body)-trailerLenLen) || n == 0 {
		return nil, moves{}, fmt.Errorf("%w: length %d in a body of %d bytes", errCorruptMoves, n, len(body))
	}
	end := len(body) - trailerLenLen
	rest, t := body[:end-int(n)], body[end-int(n):end]
	if t[0]&^flagBroken != 0 {
		return nil, moves{}, fmt.Errorf("%w: unknown flags %#x", errCorruptMoves, t[0])
	}
	m.broken = t[0]&flagBroken != 0
	t = t[1:]
	nsegs, k := codec.Uvarint(t)
	if k <= 0 || nsegs > workerproc.MaxFDs || nsegs != uint64(nfds) {
		return nil, moves{}, fmt.Errorf("%w: %d segments for %d descriptors", errCorruptMoves, nsegs, nfds)
	}
	t = t[k:]
	for range nsegs {
		if len(t) < segIDSize {
			return nil, moves{}, fmt.Errorf("%w: short segment", errCorruptMoves)
		}
		id := segmentIDAt(t)
		size, k := codec.Uvarint(t[segIDSize:])
		if k <= 0 || size == 0 || size > maxSegmentBytes {
			return nil, moves{}, fmt.Errorf("%w: segment size", errCorruptMoves)
		}
		m.segs = append(m.segs, segmentMeta{id: id, size: int(size)})
		t = t[segIDSize+k:]
	}
	nrels, k := codec.Uvarint(t)
	if k <= 0 || nrels != uint64(len(t)-k)/releaseSize || uint64(len(t)-k)%releaseSize != 0 {
		return nil, moves{}, fmt.Errorf("%w: %d releases in %d bytes", errCorruptMoves, nrels, len(t)-max(k, 0))
	}
	t = t[k:]
	if nrels > 0 {
		m.releases = make([]shmbuf.Ref, nrels)
	}
	for i := range m.releases {
		m.releases[i] = shmbuf.Ref{
			Segment: segmentIDAt(t),
			Offset:  binary.BigEndian.Uint64(t[segIDSize:]),
			Length:  binary.BigEndian.Uint64(t[segIDSize+8:]),
		}
		t = t[releaseSize:]
	}
	return rest, m, nil
}
