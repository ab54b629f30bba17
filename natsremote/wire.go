package natsremote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/outcome"
)

// Every message of the protocol, either way, starts with the same header:
//
//	version  byte  protoVersion
//	kind     byte  one of the kinds below
//	id       u64   a call's ID; a ping's or pong's node key; 0 for adverts
//	arg      u64   per kind: a call's deadline, a cancel's cause, the
//	               node's free slots on an answer or pong, a ping's heartbeat
//	token    u64   a call's token, on the call and everything about it; a
//	               ping's nonce, on the ping and its pong; 0 for adverts
//
// then a body that depends on the kind. Integers are big endian.
//
// The token is what makes an answer trustworthy: it is random, it travels
// only on the subject of the node the call was sent to, and a submitter
// takes an answer (or a pong) only with the token it sent, on the reply
// subject it sent, whose secret only that node has too (see
// submitter_replies.go). Call IDs are the submitter's, unique on its
// inbox; a node keys calls by their token, and acts on a cancel or a ping
// only for a call whose ID and token it carries.
//
// protoVersion changes only with what a peer of another version would
// misread. A peer of another version is refused whole (a node answers its
// calls "unknown"; a submitter drops its answers), so a change of version
// splits a fleet in a rolling upgrade. A new answer kind keeps the
// version: a submitter that lacks a kind fails that one call with an
// error (see read) and never sends it again, and a node that lacks
// kindNotStarted answers "crashed" for a worker that did not start
// (ErrWorkerCrashed, saying so). A new call kind keeps it too: a node
// that lacks kindProgramCall ignores the call, which never runs, and its
// next pong names it missing, so that the call fails with ErrNodeLost
// (only pools that run Extern tasks send one).
const (
	protoVersion = 2
	headerLen    = 1 + 1 + 8 + 8 + 8
)

// Submitter to node, on the node's subject. A call or a ping has a reply
// subject on the submitter's inbox (see replyToCall, replyToPing).
const (
	// kindCall runs a task. arg: the deadline (Unix ns; 0 for none).
	// Body: callHead, then the input's msgpack.
	kindCall byte = iota + 1
	// kindCancel ends a call whose caller gave up. arg: the cause (see
	// causeCode).
	kindCancel
	// kindPing asks the node how it is, and says the submitter still
	// waits for the calls listed: the body is (ID u64, token u64) pairs.
	// arg: the submitter's heartbeat (ns).
	kindPing
	// kindProgramCall runs a task of a program of another language
	// (pool.Extern). arg: the deadline, as kindCall's. Body: callHead,
	// its fingerprint 0, then the input as a program value (see
	// wire_program.go); its result's body is the output so.
	kindProgramCall
)

// Node to submitter, on the reply subject. Every answer's arg is the
// node's free slots as it sends it. Most answers are outcomes of
// internal/outcome, each with its kind here (see answerKinds).
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
	// kindPong answers a ping: the body is the node's status (see
	// appendStatus), then the IDs of the pinged calls the node does not
	// have (u64 each); those are lost.
	kindPong
	// kindLate: the call came after its start bound (callHead.startBy):
	// the node never ran it. No body.
	kindLate
	// kindNotStarted: the node's worker process for the call did not
	// start (pool.ErrWorkerStartFailed); the call never ran. Body: the
	// node pool's account of the failed start.
	kindNotStarted
	// kindRaised: a program's task raised an exception. Body: the JSON
	// object {"type", "message", "traceback"}, as outcome.Raised has it.
	kindRaised
	// kindPermanent: the task returned an error marked as not worth
	// trying again (outcome.Permanent). Body: its message.
	kindPermanent
)

// answerKinds puts each outcome of a call on this wire: the kind of the
// node's answer. kindFull, kindLate and kindPong say that a node did not
// take a call, or how it is, not how a call ended: they name no outcome.
// The bytes are the protocol's; TestAnswerKindBytes pins them.
var answerKinds = outcome.Wire{
	kindUnknown:    outcome.Unknown,
	kindResult:     outcome.Result,
	kindError:      outcome.Error,
	kindPanic:      outcome.Panic,
	kindGoexit:     outcome.Goexit,
	kindTooLarge:   outcome.TooLarge,
	kindCrashed:    outcome.Crashed,
	kindEnded:      outcome.Ended,
	kindLost:       outcome.Lost,
	kindNotStarted: outcome.NotStarted,
	kindRaised:     outcome.Raised,
	kindPermanent:  outcome.Permanent,
}

// answerKind is k's kind on the wire. Every outcome has one; the zero
// Kind, which is none, goes as an error.
func answerKind(k outcome.Kind) byte { return answerKinds.Byte(k, kindError) }

// outcomeOf is the outcome an answer's kind names; the zero Kind for a
// kind that names none (a submitter reports that answer as one it does
// not know).
func outcomeOf(wire byte) outcome.Kind { return answerKinds.Kind(wire) }

// kindAdvert is a node's capacity advert, on the pool's advert subject
// (see advert.go).
const kindAdvert byte = 32

// errCorrupt reports a message that does not parse.
var errCorrupt = errors.New("natsremote: corrupt message")

// header is a message header.
type header struct {
	kind  byte
	id    uint64
	arg   uint64
	token uint64
}

// appendHeader appends a message header to b.
func appendHeader(b []byte, h header) []byte {
	b = append(b, protoVersion, h.kind)
	b = binary.BigEndian.AppendUint64(b, h.id)
	b = binary.BigEndian.AppendUint64(b, h.arg)
	return binary.BigEndian.AppendUint64(b, h.token)
}

// putHeader writes a header over the first headerLen bytes of b.
func putHeader(b []byte, h header) {
	b[0], b[1] = protoVersion, h.kind
	binary.BigEndian.PutUint64(b[2:], h.id)
	binary.BigEndian.PutUint64(b[10:], h.arg)
	binary.BigEndian.PutUint64(b[18:], h.token)
}

// parseHeader splits a message into its header and body. A message of
// another protocol version is errVersion, so that a node can say so.
func parseHeader(data []byte) (header, []byte, error) {
	if len(data) < 2 {
		return header{}, nil, fmt.Errorf("%w: %d bytes", errCorrupt, len(data))
	}
	if data[0] != protoVersion {
		return header{}, nil, fmt.Errorf("%w: version %d, want %d", errVersion, data[0], protoVersion)
	}
	if len(data) < headerLen {
		return header{}, nil, fmt.Errorf("%w: %d bytes", errCorrupt, len(data))
	}
	return header{
		kind:  data[1],
		id:    binary.BigEndian.Uint64(data[2:]),
		arg:   binary.BigEndian.Uint64(data[10:]),
		token: binary.BigEndian.Uint64(data[18:]),
	}, data[headerLen:], nil
}

var errVersion = errors.New("natsremote: another protocol version")

// A call's body starts with callHead:
//
//	heartbeat    u64      the submitter's, in ns: the node's watchdog
//	fingerprint  u64      of the task's In and Out types
//	startBy      u64      Unix ns: the node must not start the call later
//	                      (its submitter may have given up on the node by
//	                      then); 0 for no bound
//	trace        uvarint length, then the caller's trace context
//	                      (codec.AppendCarrier; empty when the pool has no
//	                      Tracer), read only by a node with one
//	name         uvarint length, then the task's name
//
// and the input's msgpack follows.
const (
	maxNameLen  = 1024
	maxTraceLen = codec.MaxCarrier
)

// callHead is a call's fixed part after the header.
type callHead struct {
	heartbeat   uint64
	fingerprint uint64
	startBy     uint64
	trace       []byte
	task        string
}

// appendCallHead appends c's head to b.
func appendCallHead(b []byte, c callHead) []byte {
	b = binary.BigEndian.AppendUint64(b, c.heartbeat)
	b = binary.BigEndian.AppendUint64(b, c.fingerprint)
	b = binary.BigEndian.AppendUint64(b, c.startBy)
	b = binary.AppendUvarint(b, uint64(len(c.trace)))
	b = append(b, c.trace...)
	b = binary.AppendUvarint(b, uint64(len(c.task)))
	return append(b, c.task...)
}

// parseCallHead splits a call's body into its head and the input.
func parseCallHead(body []byte) (callHead, []byte, error) {
	if len(body) < 24 {
		return callHead{}, nil, fmt.Errorf("%w: call of %d bytes", errCorrupt, len(body))
	}
	c := callHead{
		heartbeat:   binary.BigEndian.Uint64(body),
		fingerprint: binary.BigEndian.Uint64(body[8:]),
		startBy:     binary.BigEndian.Uint64(body[16:]),
	}
	body = body[24:]
	trace, body, err := splitField(body, maxTraceLen, "trace context")
	if err != nil {
		return callHead{}, nil, err
	}
	name, body, err := splitField(body, maxNameLen, "task name")
	if err != nil {
		return callHead{}, nil, err
	}
	if len(trace) > 0 {
		c.trace = trace
	}
	c.task = string(name)
	return c, body, nil
}

// splitField splits a uvarint-length-prefixed field of at most limit
// bytes off the front of b.
func splitField(b []byte, limit uint64, what string) (field, rest []byte, err error) {
	n, k := codec.Uvarint(b)
	if k <= 0 || n > limit || uint64(len(b)-k) < n {
		return nil, nil, fmt.Errorf("%w: %s", errCorrupt, what)
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// A ping lists the calls its submitter waits for as (ID, token) pairs.
type listedCall struct{ id, token uint64 }

func appendListed(b []byte, calls []listedCall) []byte {
	for _, c := range calls {
		b = binary.BigEndian.AppendUint64(b, c.id)
		b = binary.BigEndian.AppendUint64(b, c.token)
	}
	return b
}

func parseListed(body []byte) ([]listedCall, error) {
	if len(body)%16 != 0 {
		return nil, fmt.Errorf("%w: %d bytes of listed calls", errCorrupt, len(body))
	}
	calls := make([]listedCall, len(body)/16)
	for i := range calls {
		calls[i] = listedCall{binary.BigEndian.Uint64(body[16*i:]), binary.BigEndian.Uint64(body[16*i+8:])}
	}
	return calls, nil
}

// appendIDs appends call IDs to b, and parseIDs reads them back: the tail
// of a pong.
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

// Subjects of a pool named pool. A node named name, with the random
// suffix that makes its ID unique, takes its calls on
// offload.POOL.node.NAME.SUFFIX: a NATS user for the nodes called NAME can
// be allowed to subscribe to offload.POOL.node.NAME.* and no other node's.
func advertSubject(pool string) string   { return "offload." + pool + ".adverts" }
func discoverSubject(pool string) string { return "offload." + pool + ".discover" }
func nodeSubject(pool, name, suffix string) string {
	return "offload." + pool + ".node." + name + "." + suffix
}
