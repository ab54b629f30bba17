package natsremote

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// A pool gets every answer and pong on a reply subject of its own inbox,
// which names what it answers and carries a secret:
//
//	INBOX.c.ID.SECRET    the answer to call ID
//	INBOX.p.KEY.SECRET   the pong to a ping of node KEY
//
// INBOX is the connection's inbox prefix and 128 random bits, drawn for
// each pool; SECRET is 128 random bits drawn for each call sent (a call
// sent again goes under a new ID) and each ping. The subject travels only
// with the call or ping, on the subject of the node it goes to, so nobody
// but that node and the NATS server can name it: not another node, which
// learns only the subjects of its own calls and pings, nor a node of
// another pool on the same connection. That matters
// for "no responders", the server's word that nobody subscribed to the
// node's subject when the call or ping was published: an empty message
// with the header Status: 503 and nothing else, so that the subject alone
// says what it is about, and anyone allowed to publish there could send
// the same (see onNoResponders).

// secret is 128 random bits of a reply subject.
type secret [2]uint64

// secret draws a fresh one from the pool's CSPRNG, ChaCha8 seeded from
// crypto/rand: about 20 ns, a fifth of crypto/rand's (see
// BenchmarkReplySubject). s.mu is held.
func (s *submitter) secret() secret {
	return secret{s.rng.Uint64(), s.rng.Uint64()}
}

// newInbox is a pool's inbox: nc's inbox prefix (what permissions name)
// and 128 bits from crypto/rand, not nats.go's NewInbox, whose inboxes in
// one process share a prefix and count up.
func newInbox(nc *nats.Conn) string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // never fails (crypto/rand's contract)
	return inbox(nc.Opts.InboxPrefix) + "." + hex.EncodeToString(b[:])
}

// Kinds of reply subject.
const (
	replyCall byte = 'c'
	replyPing byte = 'p'
)

// replyToCall and replyToPing are the reply subjects of p, registered,
// and of n's latest ping.
func (s *submitter) replyToCall(p *pending) string {
	return formatReply(s.inbox, reply{replyCall, p.id, p.reply})
}

func (s *submitter) replyToPing(n *knownNode) string {
	return formatReply(s.inbox, reply{replyPing, n.key, n.pingReply})
}

// pingNonce is the nonce of n's ping whose reply subject has secret x,
// one of its last two pings; ok is false if neither has x. s.mu is held.
func (n *knownNode) pingNonce(x secret) (nonce uint64, ok bool) {
	switch {
	case n.nonce != 0 && x == n.pingReply:
		return n.nonce, true
	case n.prevNonce != 0 && x == n.prevPingReply:
		return n.prevNonce, true
	}
	return 0, false
}

// reply is a reply subject's kind, number (call ID or node key) and
// secret.
type reply struct {
	kind   byte
	num    uint64
	secret secret
}

// formatReply is r's subject on inbox.
func formatReply(inbox string, r reply) string {
	var buf [160]byte // on the stack for inbox prefixes up to 71 bytes: one allocation, the string
	b := append(buf[:0], inbox...)
	b = append(b, '.', r.kind, '.')
	b = strconv.AppendUint(b, r.num, 10)
	b = append(b, '.')
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], r.secret[0])
	binary.BigEndian.PutUint64(raw[8:], r.secret[1])
	return string(hex.AppendEncode(b, raw[:]))
}

// parseReply parses a subject on inbox; ok is false for one that no call
// or ping has.
func parseReply(inbox, subject string) (r reply, ok bool) {
	rest, ok := strings.CutPrefix(subject, inbox)
	if !ok || len(rest) < 3 || rest[0] != '.' || rest[2] != '.' || rest[1] != replyCall && rest[1] != replyPing {
		return reply{}, false
	}
	r.kind = rest[1]
	num, hexed, ok := strings.Cut(rest[3:], ".")
	if !ok || len(hexed) != 32 {
		return reply{}, false
	}
	var err error
	if r.num, err = strconv.ParseUint(num, 10, 64); err != nil {
		return reply{}, false
	}
	var raw [16]byte
	if _, err := hex.Decode(raw[:], []byte(hexed)); err != nil {
		return reply{}, false
	}
	r.secret = secret{binary.BigEndian.Uint64(raw[:8]), binary.BigEndian.Uint64(raw[8:])}
	return r, true
}
