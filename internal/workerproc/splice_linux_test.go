package workerproc

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSplicedBodyIsTheWritersUntilWriteFrameReturns: a body large enough
// to be spliced arrives as it was when WriteFrame was called, though the
// writer overwrites it the moment WriteFrame returns and the reader is
// still reading (a page still spliced in the pipe would show the new
// bytes); a body just under the splicing size arrives intact too.
func TestSplicedBodyIsTheWritersUntilWriteFrameReturns(t *testing.T) {
	t.Parallel()
	a, b := newPair(t, 64<<20)
	require.Positive(t, a.pipeCap, "the pipe's capacity is known, so bodies are spliced")
	for _, n := range []int{2*a.pipeCap - 1, 2 * a.pipeCap, 8<<20 + 123} {
		want := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz"), n/36+1)[:n]
		body := bytes.Clone(want)
		got := make(chan Frame, 1)
		go func() {
			f, err := b.ReadFrame()
			assert.NoError(t, err)
			got <- f
		}()
		require.NoError(t, a.WriteFrame(Frame{Kind: 1, ID: uint64(n), Body: body}))
		clear(body) // the writer reuses its body at once
		f := <-got
		require.Equal(t, uint64(n), f.ID)
		require.True(t, bytes.Equal(want, f.Body), "body of %d bytes changed in the pipe", n)
	}
}
