//go:build linux

package workerproc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Unread counts what the peer has not read of our frames, also once the
// peer is gone: the pool's test of whether a dead worker took its call.
func TestUnread(t *testing.T) {
	a, b := newPair(t, 1024)
	n, err := a.Unread()
	require.NoError(t, err)
	assert.Zero(t, n)

	require.NoError(t, a.WriteFrame(Frame{Kind: 1, ID: 1, Body: []byte("hello")}))
	n, err = a.Unread()
	require.NoError(t, err)
	assert.Equal(t, HeaderSize+5, n)

	_, err = b.ReadFrame()
	require.NoError(t, err)
	n, err = a.Unread()
	require.NoError(t, err)
	assert.Zero(t, n, "the peer read the frame whole")

	require.NoError(t, a.WriteFrame(Frame{Kind: 1, ID: 2, Body: []byte("never read")}))
	require.NoError(t, b.Close()) // the peer dies without reading it
	n, err = a.Unread()
	require.NoError(t, err)
	assert.Equal(t, HeaderSize+10, n)

	require.NoError(t, a.Close())
	_, err = a.Unread()
	assert.ErrorIs(t, err, ErrClosed)
}
