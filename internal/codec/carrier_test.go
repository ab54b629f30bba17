package codec

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCarrierRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []map[string]string{
		{},
		{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "a=1,b=2", "baggage": "user=42", "": ""},
		{"baggage": strings.Repeat("k=v,", 2000)},
	} {
		b := AppendCarrier(nil, c)
		got, err := ParseCarrier(b)
		require.NoError(t, err)
		assert.Equal(t, c, got)
		assert.Equal(t, b, AppendCarrier(nil, got), "one encoding per carrier")
	}
	assert.Equal(t, []byte{0}, AppendCarrier(nil, nil))
}

func TestParseCarrierRefusesWhatAppendWouldNotWrite(t *testing.T) {
	t.Parallel()
	for name, b := range map[string][]byte{
		"empty":             nil,
		"count past end":    {3, 0, 0},
		"count huge":        {0xff, 0xff, 0xff, 0xff, 0x0f},
		"key cut short":     {1, 3, 'k'},
		"value missing":     {1, 1, 'k'},
		"value cut short":   {1, 1, 'k', 4, 'v'},
		"bytes left over":   {1, 1, 'k', 1, 'v', 0},
		"key twice":         {2, 1, 'k', 0, 1, 'k', 0},
		"keys out of order": {2, 1, 'z', 0, 1, 'a', 0},
		"varint not short":  {0x80, 0x00},
	} {
		_, err := ParseCarrier(b)
		assert.ErrorContains(t, err, "corrupt trace context", name)
	}
	_, err := ParseCarrier(make([]byte, MaxCarrier+1))
	require.ErrorIs(t, err, ErrCarrierTooLarge)

	// The carrier is flat: bytes that would nest msgpack a million deep
	// are too long, or a count that does not parse.
	_, err = ParseCarrier(bytes.Repeat([]byte{0x91}, 1<<20))
	require.ErrorIs(t, err, ErrCarrierTooLarge)
	_, err = ParseCarrier(bytes.Repeat([]byte{0x91}, MaxCarrier))
	require.ErrorContains(t, err, "corrupt trace context")
}

type extractedKey struct{}

// ExtractCarrier hands the carrier to extract, and turns what would take
// the process down (a panic) or break the task (a nil ctx) into errors.
func TestExtractCarrier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	encoded := AppendCarrier(nil, map[string]string{"traceparent": "tp"})
	keep := func(ctx context.Context, c map[string]string) context.Context {
		return context.WithValue(ctx, extractedKey{}, c["traceparent"])
	}
	got, err := ExtractCarrier(ctx, encoded, keep)
	require.NoError(t, err)
	assert.Equal(t, "tp", got.Value(extractedKey{}))

	for _, extract := range []func(context.Context, map[string]string) context.Context{nil, keep} {
		got, err = ExtractCarrier(ctx, nil, extract)
		require.NoError(t, err)
		assert.Equal(t, ctx, got, "nothing carried: ctx as it is")
	}
	got, err = ExtractCarrier(ctx, encoded, nil)
	require.NoError(t, err)
	assert.Equal(t, ctx, got, "no extract: the carrier is not read")
	_, err = ExtractCarrier(ctx, []byte{1, 3, 'k'}, keep)
	require.ErrorContains(t, err, "corrupt trace context")

	_, err = ExtractCarrier(ctx, encoded, func(context.Context, map[string]string) context.Context { panic("boom") })
	require.ErrorContains(t, err, "Extract panicked: boom")
	_, err = ExtractCarrier(ctx, encoded, func(context.Context, map[string]string) context.Context { return nil })
	require.ErrorContains(t, err, "nil context")
}
