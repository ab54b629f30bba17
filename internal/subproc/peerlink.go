package subproc

import (
	"fmt"
	"os"
	"sync"

	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/offloadgo/offload/internal/workerproc"
)

// peerLink is one end of the Buffer traffic on a worker process's
// connection: the shmbuf.Peer, and the releases that did not fit on the
// last frame. The parent has one per live process, the worker one for its
// connection. Safe for concurrent use (a worker may reply to two calls at
// once).
type peerLink struct {
	peer     shmbuf.Peer
	maxFrame int

	mu    sync.Mutex
	carry []shmbuf.Ref // drained releases waiting for room on a frame
}

func newPeerLink(maxFrame int, side shmbuf.Side) *peerLink {
	return &peerLink{peer: shmbuf.NewPeer(side), maxFrame: maxFrame}
}

// seal makes f carry segs (the segments the message references that the
// remote side lacks), as many pending releases as fit, and broken. A frame
// with none of them is left as it is, unless moved says its body was
// encoded by the Peer (the receiver decodes a flagged call with its
// Peer). It fails, sending nothing, when segs
// are more than one frame's descriptors: the message's moves are committed
// on the Peer then, so the caller must treat the connection as broken.
func (k *peerLink) seal(f *workerproc.Frame, segs []shmbuf.Segment, broken, moved bool) error {
	if len(segs) > workerproc.MaxFDs {
		return fmt.Errorf("pool: a message moves %d Buffers to the other process, more than %d (one descriptor each)", len(segs), workerproc.MaxFDs)
	}
	releases := k.takeReleases(k.maxFrame - len(f.Body) - trailerFixed)
	if len(segs) == 0 && len(releases) == 0 && !broken && !moved {
		return nil
	}
	m := moves{broken: broken, releases: releases, segs: make([]segmentMeta, len(segs))}
	f.FDs = make([]int, len(segs))
	for i, s := range segs {
		m.segs[i] = segmentMeta{id: s.ID, size: s.Size}
		f.FDs[i] = s.FD // the kernel duplicates it; the sender closes only given ones
	}
	f.Body = appendMoves(f.Body, m)
	f.Kind |= kindMoves
	return nil
}

// takeReleases returns the releases that fit in room bytes of trailer, and
// keeps the rest for the next frame.
func (k *peerLink) takeReleases(room int) []shmbuf.Ref {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.carry = append(k.carry, k.peer.DrainReleases()...)
	n := min(len(k.carry), max(room, 0)/releaseSize)
	out := k.carry[:n:n]
	k.carry = k.carry[n:]
	if len(k.carry) == 0 {
		k.carry = nil
	}
	return out
}

// open reads a received frame's moves: it adopts the segments whose
// descriptors came with it and applies its releases, and returns the kind
// and body without them. It takes the frame's descriptors and closes
// those it does not adopt, on every path. An error means the remote side
// sent something the Peers can't agree on: the connection is broken.
func (k *peerLink) open(f workerproc.Frame) (kind byte, body []byte, broken bool, err error) {
	if f.Kind&kindMoves == 0 {
		closeFDs(f.FDs) // none are expected; don't leak a stray one
		return f.Kind, f.Body, false, nil
	}
	body, m, err := splitMoves(f.Body, len(f.FDs))
	if err != nil {
		closeFDs(f.FDs)
		return 0, nil, true, err
	}
	for i, s := range m.segs {
		if err == nil {
			err = k.peer.Adopt(s.id, f.FDs[i], s.size) // takes the descriptor
		} else {
			closeFDs(f.FDs[i : i+1])
		}
	}
	if rerr := k.peer.ApplyReleases(m.releases); err == nil {
		err = rerr
	}
	return f.Kind &^ kindMoves, body, m.broken || err != nil, err
}

// close ends the Peer: only once the remote process is reaped.
func (k *peerLink) close() { _ = k.peer.Close() }

// closeFDs closes descriptors that came with a frame, on either side.
func closeFDs(fds []int) {
	for _, fd := range fds {
		os.NewFile(uintptr(fd), "").Close()
	}
}
