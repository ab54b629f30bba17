package natsremote

import (
	crand "crypto/rand"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reply subject parses back to what made it, and nothing but the
// inbox's own subjects, of a known kind with a full secret, parses.
func TestReplySubjects(t *testing.T) {
	t.Parallel()
	const inbox = "_INBOX.0123456789abcdef0123456789abcdef"
	for _, r := range []reply{{replyCall, 1, secret{1, 2}}, {replyPing, 1<<64 - 1, secret{1<<64 - 1, 0}}} {
		got, ok := parseReply(inbox, formatReply(inbox, r))
		require.True(t, ok)
		assert.Equal(t, r, got)
	}
	for _, subject := range []string{
		inbox + ".c.1", // no secret
		inbox + ".c.1.0123",
		inbox + ".c.1.0123456789abcdef0123456789abcdeX",
		inbox + ".x.1.0123456789abcdef0123456789abcdef",
		inbox + ".c..0123456789abcdef0123456789abcdef",
		inbox + ".c.-1.0123456789abcdef0123456789abcdef",
		inbox + "X.c.1.0123456789abcdef0123456789abcdef",
		"_INBOX.other.c.1.0123456789abcdef0123456789abcdef",
		inbox,
	} {
		_, ok := parseReply(inbox, subject)
		assert.False(t, ok, subject)
	}
}

// What a call's reply subject costs, per call sent: its secret, from the
// pool's ChaCha8 (crypto/rand's for comparison), the subject, and parsing
// it on the answer, against a subject that names the call by its ID
// alone.
func BenchmarkReplySubject(b *testing.B) {
	const inbox = "_INBOX.0123456789abcdef0123456789abcdef"
	b.Run("secret-chacha8", func(b *testing.B) {
		s := &submitter{rng: rand.NewChaCha8([32]byte{1})}
		var x secret
		for range b.N {
			x = s.secret()
		}
		_ = x
	})
	b.Run("secret-crypto-rand", func(b *testing.B) {
		var raw [16]byte
		for range b.N {
			_, _ = crand.Read(raw[:])
		}
	})
	b.Run("subject", func(b *testing.B) {
		for i := range b.N {
			_ = formatReply(inbox, reply{replyCall, uint64(i), secret{uint64(i), uint64(i)}})
		}
	})
	b.Run("parse", func(b *testing.B) {
		subject := formatReply(inbox, reply{replyCall, 12345, secret{1, 2}})
		for range b.N {
			_, _ = parseReply(inbox, subject)
		}
	})
	b.Run("id-only", func(b *testing.B) {
		for i := range b.N {
			_ = inbox + ".c." + strconv.FormatUint(uint64(i), 10)
		}
	})
}
