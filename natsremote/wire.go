package natsremote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/offloadgo/offload/internal/codec"
)

// Every message of the protocol, either way, starts with the same header:
//
//	version  byte  protoVersion
//	kind     byte  one of the kinds below
//	id       u64   the call's ID (0 for pings, pongs and adverts)
//	arg      u64   per kind: a call's deadline, a cancel's cause, the
//	               node's free slots on an answer, a ping's heartbeat
//
// then a body that depends on the kind. Integers are big endian. A call's
// ID is the submitter's, unique on its inbox: a node keys calls by the
// inbox they came from and their ID.
const (
	protoVersion = 1
	headerLen    = 1 + 1 + 8 + 8
)

// Submitter to node, on the node's subject, with the submitter's inbox as
// the reply subject.
const (
	// kindCall runs a task. arg: the deadline (Unix ns; 0 for none).
	// Body: callHead, then the input's msgpack.
	kindCall byte = iota + 1
	// kindCancel ends a call whose caller gave up. arg: the cause (see
	// causeCode).
	kindCancel
	// kindPing says the submitter still waits for the calls listed: the
	// body is their IDs (u64 each). arg: the submitter's heartbeat (ns).
	kindPing
)

// Node to submitter, on its inbox. Every answer's arg is the node's free
// slots as it sends it.
const (
	// kindFull: the node has no free slot; the call never ran. No body.
	kindFull byte = iota + 16
	// kindUnknown: the node lacks the task, has another version of it
	// (fingerprint), or speaks another protocol; the call never ran.
	// Body: why.
	kindUnknown
	// kindResult: the task returned nil. Body: the output's msgpack.
	kindResult
	// kindError: the task returned an error, or its input would not
	// decode, or its output would not encode. Body: the message.
	kindError
	// kindPanic: the task panicked. Body: codec.EncodePanic.
	kindPanic
	// kindGoexit: the task called runtime.Goexit. No body.
	kindGoexit
	// kindTooLarge: the output is over the connection's maximum payload
	// (or a Subprocess node's own MaxPayload). Body: a message.
	kindTooLarge
	// kindCrashed: the node's worker process died under the task. Body:
	// its account.
	kindCrashed
	// kindEnded: the task's ctx ended on the node before it returned (its
	// deadline passed there, or the node's submitter seemed gone).
	// Body: one byte, the cause (see causeCode).
	kindEnded
	// kindLost: the node shut down under the task. Body: a message.
	kindLost
	// kindPong answers a ping: the body lists the IDs of the pinged calls
	// the node does not have (u64 each); those are lost.
	kindPong
)

// kindAdvert is a node's capacity advert, on the pool's advert subject
// (see advert.go).
const kindAdvert byte = 32

// errCorrupt reports a message that does not parse.
var errCorrupt = errors.New("natsremote: corrupt message")

// header is a parsed message header.
type header struct {
	kind byte
	id   uint64
	arg  uint64
}

// appendHeader appends a message header to b.
func appendHeader(b []byte, kind byte, id, arg uint64) []byte {
	b = append(b, protoVersion, kind)
	b = binary.BigEndian.AppendUint64(b, id)
	return binary.BigEndian.AppendUint64(b, arg)
}

// putHeader writes a header over the first headerLen bytes of b.
func putHeader(b []byte, kind byte, id, arg uint64) {
	b[0], b[1] = protoVersion, kind
	binary.BigEndian.PutUint64(b[2:], id)
	binary.BigEndian.PutUint64(b[10:], arg)
}

// parseHeader splits a message into its header and body. A message of
// another protocol version is errVersion, so that a node can say so.
func parseHeader(data []byte) (header, []byte, error) {
	if len(data) < headerLen {
		return header{}, nil, fmt.Errorf("%w: %d bytes", errCorrupt, len(data))
	}
	if data[0] != protoVersion {
		return header{}, nil, fmt.Errorf("%w: version %d, want %d", errVersion, data[0], protoVersion)
	}
	return header{
		kind: data[1],
		id:   binary.BigEndian.Uint64(data[2:]),
		arg:  binary.BigEndian.Uint64(data[10:]),
	}, data[headerLen:], nil
}

var errVersion = errors.New("natsremote: another protocol version")

// A call's body starts with callHead:
//
//	heartbeat    u64      the submitter's, in ns: the node's watchdog
//	fingerprint  u64      of the task's In and Out types
//	name         uvarint length, then the task's name
//
// and the input's msgpack follows.
const maxNameLen = 1024

// callHead is a call's fixed part after the header.
type callHead struct {
	heartbeat   uint64
	fingerprint uint64
	task        string
}

// appendCallHead appends c's head to b.
func appendCallHead(b []byte, c callHead) []byte {
	b = binary.BigEndian.AppendUint64(b, c.heartbeat)
	b = binary.BigEndian.AppendUint64(b, c.fingerprint)
	b = binary.AppendUvarint(b, uint64(len(c.task)))
	return append(b, c.task...)
}

// parseCallHead splits a call's body into its head and the input.
func parseCallHead(body []byte) (callHead, []byte, error) {
	if len(body) < 16 {
		return callHead{}, nil, fmt.Errorf("%w: call of %d bytes", errCorrupt, len(body))
	}
	c := callHead{heartbeat: binary.BigEndian.Uint64(body), fingerprint: binary.BigEndian.Uint64(body[8:])}
	body = body[16:]
	n, k := codec.Uvarint(body)
	if k <= 0 || n > maxNameLen || uint64(len(body)-k) < n {
		return callHead{}, nil, fmt.Errorf("%w: task name", errCorrupt)
	}
	c.task = string(body[k : k+int(n)])
	return c, body[k+int(n):], nil
}

// appendIDs appends call IDs to b, and parseIDs reads them back: a ping's
// or a pong's body.
func appendIDs(b []byte, ids []uint64) []byte {
	for _, id := range ids {
		b = binary.BigEndian.AppendUint64(b, id)
	}
	return b
}

func parseIDs(body []byte) ([]uint64, error) {
	if len(body)%8 != 0 {
		return nil, fmt.Errorf("%w: %d bytes of IDs", errCorrupt, len(body))
	}
	ids := make([]uint64, len(body)/8)
	for i := range ids {
		ids[i] = binary.BigEndian.Uint64(body[8*i:])
	}
	return ids, nil
}

// checkToken reports whether s can be one token of a NATS subject.
func checkToken(what, s string) error {
	if s == "" || len(s) > 128 || strings.ContainsAny(s, ".*> \t\r\n") {
		return fmt.Errorf("natsremote: %s %q is not a NATS subject token (1–128 bytes, none of . * > or spaces)", what, s)
	}
	return nil
}

// Subjects of a pool named name.
func advertSubject(name string) string   { return "offload." + name + ".adverts" }
func discoverSubject(name string) string { return "offload." + name + ".discover" }
func nodeSubject(name, id string) string { return "offload." + name + ".node." + id }
