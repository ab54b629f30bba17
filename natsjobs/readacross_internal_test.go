package natsjobs

import (
	"context"
	"testing"
	"time"

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
		r, _, err := w.readAcross(t.Context(), time.Minute, func(ctx context.Context) (record, *jetstream.RawStreamMsg, error) {
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
	_, _, err := w.readAcross(ctx, time.Minute, func(ctx context.Context) (record, *jetstream.RawStreamMsg, error) {
		reads++
		cancel()
		return record{}, nil, ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, reads)
}

// A read that its try's bound ends (a request to a bucket without a
// leader, never answered) is made again; one refused is not.
func TestReadAcrossReadsAgainWhatTheServerCouldNotAnswer(t *testing.T) {
	var w watcher
	reads := 0
	r, _, err := w.readAcross(t.Context(), time.Millisecond, func(ctx context.Context) (record, *jetstream.RawStreamMsg, error) {
		if reads++; reads == 1 {
			<-ctx.Done() // never answered
			return record{}, nil, ctx.Err()
		}
		return record{State: Succeeded}, nil, nil
	})
	require.NoError(t, err)
	assert.Equal(t, Succeeded, r.State)
	assert.Equal(t, 2, reads)

	reads = 0
	_, _, err = w.readAcross(t.Context(), time.Minute, func(context.Context) (record, *jetstream.RawStreamMsg, error) {
		reads++
		return record{}, nil, ErrNotFound
	})
	require.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, 1, reads)
}
