package natsremote

import (
	"encoding/binary"
	"fmt"
	"time"
)

// status is what a node says of itself, in its adverts and its pongs:
//
//	workers    u32
//	busy       u32
//	heartbeat  u64   ns between the node's adverts
//	flags      byte  flagLeaving
//
// with its free slots in the header's arg.
type status struct {
	workers   int
	busy      int
	free      int
	heartbeat time.Duration
	leaving   bool
}

const (
	statusLen   = 4 + 4 + 8 + 1
	flagLeaving = 1
)

// maxSlots bounds the slot counts a node may claim: no pool has more
// workers, and the submitter does arithmetic on them.
const maxSlots = 1 << 20

func appendStatus(b []byte, s status) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(s.workers))
	b = binary.BigEndian.AppendUint32(b, uint32(s.busy))
	b = binary.BigEndian.AppendUint64(b, uint64(s.heartbeat))
	var flags byte
	if s.leaving {
		flags |= flagLeaving
	}
	return append(b, flags)
}

// parseStatus reads a status off the front of body, with free from the
// header, and returns the rest.
func parseStatus(free uint64, body []byte) (status, []byte, error) {
	if len(body) < statusLen {
		return status{}, nil, fmt.Errorf("%w: status of %d bytes", errCorrupt, len(body))
	}
	s := status{
		free:      int(min(free, maxSlots)),
		workers:   int(min(binary.BigEndian.Uint32(body), maxSlots)),
		busy:      int(min(binary.BigEndian.Uint32(body[4:]), maxSlots)),
		heartbeat: time.Duration(min(binary.BigEndian.Uint64(body[8:]), uint64(maxHeartbeat))),
		leaving:   body[16]&flagLeaving != 0,
	}
	if body[16]&^flagLeaving != 0 || s.heartbeat < minHeartbeat {
		return status{}, nil, fmt.Errorf("%w: status flags %#x, heartbeat %v", errCorrupt, body[16], s.heartbeat)
	}
	return s, body[statusLen:], nil
}

// advert is a node's capacity advert: who it is, and its status. A node
// publishes one every heartbeat, when it starts, when it is asked (on the
// discover subject), when a slot frees after it said it had no room (see
// nodeServer.owesAdvert), and when it leaves. Anyone allowed to publish on the advert subject can
// forge one, so a submitter takes an advert as a hint only: it pings the
// node on the node's own subject, and learns its figures, and that it is
// alive, from the pong (see submitter_nodes.go).
//
// On the wire: the header (kindAdvert, id 0, arg the free slots, token 0),
// the status, then the node's name and suffix (uvarint length, then the
// subject token, each): its ID is NAME-SUFFIX, and it takes calls on
// nodeSubject(pool, name, suffix).
type advert struct {
	status
	name, suffix string
}

// maxIDLen bounds a node's name and suffix (each a subject token).
const maxIDLen = 128

// id is the node's ID, as logs and Pool.Nodes show it.
func (a advert) id() string { return a.name + "-" + a.suffix }

func appendAdvert(b []byte, a advert) []byte {
	b = appendHeader(b, header{kind: kindAdvert, arg: uint64(max(a.free, 0))})
	b = appendStatus(b, a.status)
	b = binary.AppendUvarint(b, uint64(len(a.name)))
	b = append(b, a.name...)
	b = binary.AppendUvarint(b, uint64(len(a.suffix)))
	return append(b, a.suffix...)
}

func parseAdvert(data []byte) (advert, error) {
	h, body, err := parseHeader(data)
	if err != nil {
		return advert{}, err
	}
	if h.kind != kindAdvert {
		return advert{}, fmt.Errorf("%w: advert of kind %d", errCorrupt, h.kind)
	}
	st, body, err := parseStatus(h.arg, body)
	if err != nil {
		return advert{}, err
	}
	name, body, err := splitField(body, maxIDLen, "advert's node name")
	if err != nil {
		return advert{}, err
	}
	suffix, body, err := splitField(body, maxIDLen, "advert's node suffix")
	if err != nil {
		return advert{}, err
	}
	if len(body) != 0 {
		return advert{}, fmt.Errorf("%w: %d bytes after the advert", errCorrupt, len(body))
	}
	a := advert{status: st, name: string(name), suffix: string(suffix)}
	for what, token := range map[string]string{"node name": a.name, "node suffix": a.suffix} {
		if err := checkToken(what, token); err != nil {
			return advert{}, fmt.Errorf("%w: %w", errCorrupt, err)
		}
	}
	return a, nil
}
