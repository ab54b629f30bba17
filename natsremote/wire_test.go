package natsremote

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/nodehook"
)

func TestEnvURLIsPoolMains(t *testing.T) {
	assert.Equal(t, nodehook.EnvURL, EnvURL)
}

func TestWireRoundTrips(t *testing.T) {
	t.Parallel()
	msg := appendHeader(nil, kindCall, 7, 1234)
	msg = appendCallHead(msg, callHead{heartbeat: uint64(time.Second), fingerprint: 99, task: "resize"})
	msg = append(msg, "input"...)
	h, body, err := parseHeader(msg)
	require.NoError(t, err)
	assert.Equal(t, header{kind: kindCall, id: 7, arg: 1234}, h)
	head, input, err := parseCallHead(body)
	require.NoError(t, err)
	assert.Equal(t, callHead{heartbeat: uint64(time.Second), fingerprint: 99, task: "resize"}, head)
	assert.Equal(t, "input", string(input))

	putHeader(msg, kindCall, 8, 0)
	h, _, err = parseHeader(msg)
	require.NoError(t, err)
	assert.Equal(t, header{kind: kindCall, id: 8}, h)

	ids, err := parseIDs(appendIDs(nil, []uint64{1, 2, 1 << 63}))
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2, 1 << 63}, ids)

	a := advert{id: "host-1a2b", workers: 8, busy: 3, free: 5, heartbeat: time.Second, leaving: true}
	got, err := parseAdvert(appendAdvert(nil, a))
	require.NoError(t, err)
	assert.Equal(t, a, got)
}

func TestWireRefusesBadMessages(t *testing.T) {
	t.Parallel()
	_, _, err := parseHeader([]byte{protoVersion, kindCall})
	assert.ErrorIs(t, err, errCorrupt)
	bad := appendHeader(nil, kindCall, 1, 1)
	bad[0] = protoVersion + 1
	_, _, err = parseHeader(bad)
	assert.ErrorIs(t, err, errVersion)
	_, _, err = parseCallHead(appendCallHead(nil, callHead{task: "t"})[:17])
	assert.ErrorIs(t, err, errCorrupt)
	_, err = parseIDs(make([]byte, 7))
	assert.ErrorIs(t, err, errCorrupt)
	for _, a := range []advert{
		{id: "a.b", heartbeat: time.Second},
		{id: "", heartbeat: time.Second},
		{id: "ok", heartbeat: time.Microsecond},
	} {
		_, err := parseAdvert(appendAdvert(nil, a))
		assert.ErrorIs(t, err, errCorrupt, "%+v", a)
	}
}

// FuzzParseMessage feeds arbitrary bytes to everything that reads a
// message off the wire: each parser fails cleanly or returns what
// re-encodes to the same bytes, and none panics or allocates beyond the
// message's size.
func FuzzParseMessage(f *testing.F) {
	f.Add(appendCallHead(appendHeader(nil, kindCall, 1, 2), callHead{heartbeat: 3, fingerprint: 4, task: "task"}))
	f.Add(appendIDs(appendHeader(nil, kindPing, 1, uint64(time.Second)), []uint64{5, 6}))
	f.Add(appendAdvert(nil, advert{id: "node-1", workers: 4, busy: 1, free: 3, heartbeat: time.Second}))
	f.Add([]byte{protoVersion, kindAdvert})
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, body, err := parseHeader(data); err == nil {
			again := appendHeader(nil, h.kind, h.id, h.arg)
			require.Equal(t, data[:headerLen], again)
			if head, input, err := parseCallHead(body); err == nil {
				require.Equal(t, body, append(appendCallHead(nil, head), input...))
			}
			if ids, err := parseIDs(body); err == nil {
				require.Equal(t, len(body)/8, len(ids))
			}
		}
		if a, err := parseAdvert(data); err == nil {
			require.LessOrEqual(t, len(a.id), maxIDLen)
			require.NoError(t, checkToken("node ID", a.id))
			require.LessOrEqual(t, a.free, maxSlots)
		}
	})
}
