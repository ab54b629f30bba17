package natsremote

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/offloadgo/offload/internal/codec"
)

// advert is a node's capacity advert: who it is, and its slots. A node
// publishes one every heartbeat, at once when a slot frees after it turned
// a call away, when it starts (or is asked, on the discover subject), and
// when it leaves. Calls go to nodeSubject(pool, id).
//
// On the wire: the header (kindAdvert, id 0, arg the free slots), then
//
//	workers    u32
//	busy       u32
//	heartbeat  u64   ns between the node's adverts
//	flags      byte  flagLeaving
//	id         uvarint length, then the node's ID (a subject token)
type advert struct {
	id        string
	workers   int
	busy      int
	free      int
	heartbeat time.Duration
	leaving   bool
}

const flagLeaving = 1

// maxIDLen bounds a node's ID (a subject token, see checkToken).
const maxIDLen = 128

func appendAdvert(b []byte, a advert) []byte {
	b = appendHeader(b, kindAdvert, 0, uint64(max(a.free, 0)))
	b = binary.BigEndian.AppendUint32(b, uint32(a.workers))
	b = binary.BigEndian.AppendUint32(b, uint32(a.busy))
	b = binary.BigEndian.AppendUint64(b, uint64(a.heartbeat))
	var flags byte
	if a.leaving {
		flags |= flagLeaving
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(a.id)))
	return append(b, a.id...)
}

// maxSlots bounds the slot counts an advert may claim: no pool has more
// workers, and the submitter does arithmetic on them.
const maxSlots = 1 << 20

func parseAdvert(data []byte) (advert, error) {
	h, body, err := parseHeader(data)
	if err != nil {
		return advert{}, err
	}
	if h.kind != kindAdvert || len(body) < 4+4+8+1 {
		return advert{}, fmt.Errorf("%w: advert of kind %d, %d bytes", errCorrupt, h.kind, len(body))
	}
	a := advert{
		free:      int(min(h.arg, maxSlots)),
		workers:   int(min(binary.BigEndian.Uint32(body), maxSlots)),
		busy:      int(min(binary.BigEndian.Uint32(body[4:]), maxSlots)),
		heartbeat: time.Duration(min(binary.BigEndian.Uint64(body[8:]), uint64(maxHeartbeat))),
		leaving:   body[16]&flagLeaving != 0,
	}
	if body[16]&^flagLeaving != 0 || a.heartbeat < minHeartbeat {
		return advert{}, fmt.Errorf("%w: advert flags %#x, heartbeat %v", errCorrupt, body[16], a.heartbeat)
	}
	body = body[17:]
	n, k := codec.Uvarint(body)
	if k <= 0 || n > maxIDLen || uint64(len(body)-k) != n {
		return advert{}, fmt.Errorf("%w: advert's node ID", errCorrupt)
	}
	a.id = string(body[k:])
	if err := checkToken("node ID", a.id); err != nil {
		return advert{}, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	return a, nil
}
