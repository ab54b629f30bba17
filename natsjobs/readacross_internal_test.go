package natsjobs

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read in flight when the watch is renewed (unanswered, as a request
// lost with its server is) is made again, and its second answer counts.
func TestReadAcrossReadsAgainWhenTheWatchIsRenewed(t *testing.T) {
	var w watcher
	inFlight := make(chan struct{})
	reads := 0
	done := make(chan error, 1)
	var got record
	go func() {
		r, _, err := w.readAcross(t.Context(), func(ctx context.Context) (record, *jetstream.RawStreamMsg, error) {
			if reads++; reads == 1 {
				close(inFlight)
				<-ctx.Done() // never answered
				return record{}, nil, ctx.Err()
			}
			return record{State: Succeeded}, nil, nil
		})
		got = r
		done <- err
	}()
	<-inFlight
	w.resync()
	require.NoError(t, <-done)
	assert.Equal(t, Succeeded, got.State)
	assert.Equal(t, 2, reads)
}

// A read that its caller's ctx ends is not made again.
func TestReadAcrossEndsWithItsCtx(t *testing.T) {
	var w watcher
	ctx, cancel := context.WithCancel(t.Context())
	reads := 0
	_, _, err := w.readAcross(ctx, func(ctx context.Context) (record, *jetstream.RawStreamMsg, error) {
		reads++
		cancel()
		return record{}, nil, ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, reads)
}
