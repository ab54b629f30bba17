package natsremote

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/blobjson"
)

func TestWireRoundTrips(t *testing.T) {
	t.Parallel()
	msg := appendHeader(nil, header{kind: kindCall, id: 7, arg: 1234, token: 99})
	head := callHead{heartbeat: uint64(time.Second), fingerprint: 99, startBy: 5, trace: []byte("00-trace"), task: "resize"}
	msg = appendCallHead(msg, head)
	msg = append(msg, "input"...)
	h, body, err := parseHeader(msg)
	require.NoError(t, err)
	assert.Equal(t, header{kind: kindCall, id: 7, arg: 1234, token: 99}, h)
	got, input, err := parseCallHead(body)
	require.NoError(t, err)
	assert.Equal(t, head, got)
	assert.Equal(t, "input", string(input))

	stamp(msg, header{kind: kindCall, id: 8, token: 3}, time.Unix(0, 42))
	h, body, err = parseHeader(msg)
	require.NoError(t, err)
	assert.Equal(t, header{kind: kindCall, id: 8, token: 3}, h)
	got, _, err = parseCallHead(body)
	require.NoError(t, err)
	assert.EqualValues(t, 42, got.startBy, "stamp writes the start bound where the call's head has it")

	ids, err := parseIDs(appendIDs(nil, []uint64{1, 2, 1 << 63}))
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2, 1 << 63}, ids)
	listed, err := parseListed(appendListed(nil, []listedCall{{1, 2}, {3, 1 << 63}}))
	require.NoError(t, err)
	assert.Equal(t, []listedCall{{1, 2}, {3, 1 << 63}}, listed)

	a := advert{status: status{workers: 8, busy: 3, free: 5, heartbeat: time.Second, leaving: true}, name: "host", suffix: "1a2b"}
	gotAdvert, err := parseAdvert(appendAdvert(nil, a))
	require.NoError(t, err)
	assert.Equal(t, a, gotAdvert)
	assert.Equal(t, "host-1a2b", gotAdvert.id())
	st, rest, err := parseStatus(5, appendStatus(nil, a.status))
	require.NoError(t, err)
	assert.Equal(t, a.status, st)
	assert.Empty(t, rest)
}

func TestWireRefusesBadMessages(t *testing.T) {
	t.Parallel()
	_, _, err := parseHeader([]byte{protoVersion, kindCall})
	assert.ErrorIs(t, err, errCorrupt)
	bad := appendHeader(nil, header{kind: kindCall, id: 1, arg: 1})
	bad[0] = protoVersion - 1
	_, _, err = parseHeader(bad)
	assert.ErrorIs(t, err, errVersion, "a version 1 message")
	_, _, err = parseCallHead(appendCallHead(nil, callHead{task: "t"})[:25])
	assert.ErrorIs(t, err, errCorrupt)
	_, _, err = parseCallHead(appendCallHead(nil, callHead{task: "t", trace: make([]byte, maxTraceLen+1)}))
	assert.ErrorIs(t, err, errCorrupt, "a trace context over its bound")
	_, err = parseIDs(make([]byte, 7))
	assert.ErrorIs(t, err, errCorrupt)
	_, err = parseListed(make([]byte, 8))
	assert.ErrorIs(t, err, errCorrupt)
	ok := status{heartbeat: time.Second}
	for _, a := range []advert{
		{status: ok, name: "a.b", suffix: "1"},
		{status: ok, name: "", suffix: "1"},
		{status: ok, name: "a", suffix: "x y"},
		{status: status{heartbeat: time.Microsecond}, name: "ok", suffix: "1"},
	} {
		_, err := parseAdvert(appendAdvert(nil, a))
		assert.ErrorIs(t, err, errCorrupt, "%+v", a)
	}
	_, err = parseAdvert(append(appendAdvert(nil, advert{status: ok, name: "a", suffix: "b"}), 0))
	assert.ErrorIs(t, err, errCorrupt, "bytes after the advert")
}

// FuzzParseMessage feeds arbitrary bytes to everything that reads a
// message off the wire, its subject included: each parser fails cleanly
// or returns what re-encodes to the same bytes (a reply subject: to one
// that parses the same), and none panics or allocates beyond the
// message's size.
func FuzzParseMessage(f *testing.F) {
	f.Add(appendCallHead(appendHeader(nil, header{kind: kindCall, id: 1, arg: 2, token: 3}), callHead{heartbeat: 3, fingerprint: 4, startBy: 5, trace: []byte("t"), task: "task"}))
	f.Add(appendListed(appendHeader(nil, header{kind: kindPing, id: 1, arg: uint64(time.Second), token: 9}), []listedCall{{5, 6}}))
	f.Add(appendIDs(appendStatus(appendHeader(nil, header{kind: kindPong, id: 1, arg: 2, token: 9}), status{workers: 2, free: 2, heartbeat: time.Second}), []uint64{5}))
	f.Add(appendAdvert(nil, advert{status: status{workers: 4, busy: 1, free: 3, heartbeat: time.Second}, name: "node", suffix: "1"}))
	f.Add([]byte{protoVersion, kindAdvert})
	f.Add([]byte(formatReply("_INBOX.x", reply{replyCall, 7, secret{1, 2}})))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The bytes as a subject on a pool's inbox: anyone may publish
		// there.
		if r, ok := parseReply("_INBOX.x", string(data)); ok {
			again, ok := parseReply("_INBOX.x", formatReply("_INBOX.x", r))
			require.True(t, ok)
			require.Equal(t, r, again)
		}
		if h, body, err := parseHeader(data); err == nil {
			require.Equal(t, data[:headerLen], appendHeader(nil, h))
			if head, input, err := parseCallHead(body); err == nil {
				require.Equal(t, body, append(appendCallHead(nil, head), input...))
			}
			if ids, err := parseIDs(body); err == nil {
				require.Equal(t, len(body)/8, len(ids))
			}
			if listed, err := parseListed(body); err == nil {
				require.True(t, bytes.Equal(body, appendListed(nil, listed)), "%x", body)
			}
			if st, _, err := parseStatus(h.arg, body); err == nil {
				require.LessOrEqual(t, st.free, maxSlots)
				require.LessOrEqual(t, st.workers, maxSlots)
			}
		}
		if a, err := parseAdvert(data); err == nil {
			require.LessOrEqual(t, len(a.name), maxIDLen)
			require.NoError(t, checkToken("node name", a.name))
			require.NoError(t, checkToken("node suffix", a.suffix))
			require.LessOrEqual(t, a.free, maxSlots)
		}
	})
}

// A program value crosses as it is; one that does not parse is refused,
// and no length in it is trusted past the body.
func TestProgramValueRoundTrips(t *testing.T) {
	t.Parallel()
	v := blobjson.Raw{JSON: []byte(`{"Width":3,"Image":null}`), Field: "Image", Blob: []byte{0, 1, 0xff}}
	got, err := parseProgramValue(appendProgramValue([]byte{}, v))
	require.NoError(t, err)
	assert.Equal(t, v, got)
	assert.LessOrEqual(t, len(appendProgramValue(nil, v)), programValueLen(v))

	got, err = parseProgramValue(appendProgramValue(nil, blobjson.Raw{JSON: []byte("null")}))
	require.NoError(t, err)
	assert.Equal(t, blobjson.Raw{JSON: []byte("null"), Blob: []byte{}}, got)

	for name, body := range map[string][]byte{
		"empty":           nil,
		"JSON past end":   {10, '{', '}'},
		"no JSON":         {0, 0},
		"no field length": {2, '{', '}'},
		"field past end":  {2, '{', '}', 5, 'a'},
		"field too long":  append([]byte{2, '{', '}', 0x81, 0x10}, make([]byte, 2049)...),
	} {
		_, err := parseProgramValue(body)
		assert.ErrorIs(t, err, errCorrupt, name)
	}
}

// An exception's account is cut to fit an answer, and stays JSON with its
// type whole.
func TestRaisedIsCutToFit(t *testing.T) {
	t.Parallel()
	body := fitRaised("ValueError", "short", "tb", 1000)
	assert.JSONEq(t, `{"type":"ValueError","message":"short","traceback":"tb"}`, string(body), "one that fits is whole")
	message, traceback := strings.Repeat("m", 5000), strings.Repeat("<", 50000) // < is escaped: six bytes in JSON
	for _, limit := range []int{4096, 1000, 200} {
		body := fitRaised("ValueError", message, traceback, limit)
		assert.LessOrEqual(t, len(body), limit)
		var e struct{ Type, Message, Traceback string }
		require.NoError(t, json.Unmarshal(body, &e))
		assert.Equal(t, "ValueError", e.Type)
		assert.Contains(t, e.Traceback, " [truncated", "limit %d: the cut says so", limit)
	}
}
