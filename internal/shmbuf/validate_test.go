package shmbuf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestValidateMessage(t *testing.T) {
	t.Parallel()
	good, err := msgpack.Marshal(map[string]any{"a": []any{1, "x", 2.5, nil, true, []byte("b")}, "n": -7})
	require.NoError(t, err)
	cases := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"encoded value", good, true},
		{"trailing bytes ignored", append(append([]byte{}, good...), 0xc1), true},
		{"empty", nil, false},
		{"array32 claiming 808M elements", []byte("\xdd00000000"), false},
		{"map32 claiming 563M entries", []byte("\xdf\x21\x99\xd7\x13"), false},
		{"str8 past the end", []byte{0xd9, 10, 'a'}, false},
		{"ext32 past the end", []byte{0xc9, 0, 0, 1, 0, 42}, false},
		{"never-used code", []byte{0xc1}, false},
		{"truncated array", []byte{0x92, 1}, false},
		{"truncated length", []byte{0xdc, 0}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateMessage(tc.data)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrBadMessage)
			}
		})
	}
}
