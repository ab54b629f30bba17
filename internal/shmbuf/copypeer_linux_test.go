package shmbuf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A copy is no reference: a shared-memory Peer refuses one rather than
// take it for a Buffer it never lent.
func TestPeerRefusesACopiedBuffer(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	data, _, err := CopyPeer{}.Marshal(taskIn{In: Move([]byte("copied"))})
	require.NoError(t, err)
	var in taskIn
	assert.ErrorIs(t, p.child.Unmarshal(data, &in), ErrBadRef)
	assert.True(t, in.In.Detached())
}
