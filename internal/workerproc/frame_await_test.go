package workerproc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamOf is the bytes of frames as WriteFrame sends them.
func streamOf(fs ...Frame) []byte {
	var b []byte
	for i := range fs {
		h := make([]byte, HeaderSize)
		putHeader(h, &fs[i])
		b = append(append(b, h...), fs[i].Body...)
	}
	return b
}

// TestReaderAwaitsOnlyAnEmptyBuffer: the reader waits (await) before a
// frame only when nothing of it is buffered: once for frames that arrive
// together, once per frame when each comes alone, never mid-frame.
func TestReaderAwaitsOnlyAnEmptyBuffer(t *testing.T) {
	t.Parallel()
	two := streamOf(Frame{Kind: 1, ID: 1, Body: []byte("a")}, Frame{Kind: 1, ID: 2, Body: []byte("bc")})
	tests := []struct {
		name   string
		pieces [][]byte // what each receive returns
		awaits int      // for both frames
	}{
		{"together", [][]byte{two}, 1},
		{"one by one", [][]byte{two[:HeaderSize+1], two[HeaderSize+1:]}, 2},
		{"split inside a frame", [][]byte{two[:3], two[3 : HeaderSize+1], two[HeaderSize+1:]}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pieces, awaits := tt.pieces, 0
			r := newFrameReader(16, func(p []byte) (int, error) {
				require.NotEmpty(t, pieces, "receive past the stream's end")
				n := copy(p, pieces[0])
				pieces[0] = pieces[0][n:]
				if len(pieces[0]) == 0 {
					pieces = pieces[1:]
				}
				return n, nil
			}, nil)
			r.await = func() error {
				awaits++
				return nil
			}
			for id := uint64(1); id <= 2; id++ {
				f, err := r.next()
				require.NoError(t, err)
				assert.Equal(t, id, f.ID)
			}
			assert.Equal(t, tt.awaits, awaits)
		})
	}
}

// TestReaderAwaitError: an await that fails ends the read with its error,
// before any receive.
func TestReaderAwaitError(t *testing.T) {
	t.Parallel()
	stop := errors.New("closed")
	r := newFrameReader(16, func([]byte) (int, error) {
		t.Error("received after a failed await")
		return 0, stop
	}, nil)
	r.await = func() error { return stop }
	_, err := r.next()
	require.ErrorIs(t, err, stop)
}
