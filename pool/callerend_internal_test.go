package pool

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownCtx is a ctx of a type not package context's, with a Done of its own.
type ownCtx struct {
	context.Context
	done chan struct{}
}

func (c ownCtx) Done() <-chan struct{} { return c.done }

// readEnd finds package context's cancellable ctx behind a caller's ctx
// that ends with one, wrapped or not, and none behind a ctx of its own
// making: a Go release whose context.Cause no longer asks by the key the
// probe learns from would start a goroutine for every watched call.
func TestReadEndFindsPackageContextsCancelCtx(t *testing.T) {
	require.NotNil(t, cancelCtxKey, "the probe found package context's key")
	parent, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	type key struct{}
	for name, ctx := range map[string]context.Context{
		"itself":  parent,
		"valued":  context.WithValue(parent, key{}, 1),
		"wrapped": struct{ context.Context }{parent},
	} {
		end, err := readEnd(ctx, true)
		require.NoError(t, err, name)
		assert.Equal(t, parent.Done(), end.done, name)
		assert.NotNil(t, end.std, name)
		dl, _ := parent.Deadline()
		assert.Equal(t, dl, end.deadline, name)
	}
	own := ownCtx{parent, make(chan struct{})}
	end, err := readEnd(own, true)
	require.NoError(t, err)
	assert.Nil(t, end.std, "a Done channel of its own is watched by afterEnd")
	end, err = readEnd(parent, false)
	require.NoError(t, err)
	assert.Nil(t, end.std, "an unwatched call asks no Value")

	close(own.done)
	_, err = readEnd(own, true)
	assert.ErrorIs(t, err, context.Canceled, "an ended ctx is refused")
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now())
	defer cancelExpired()
	_, err = readEnd(expired, true)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
