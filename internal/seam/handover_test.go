package seam

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The caller and the runner tell one story whichever acts first.
func TestHandover(t *testing.T) {
	t.Run("quit before send: never sent, plain error", func(t *testing.T) {
		var h Handover
		h.Quit()
		assert.False(t, h.Send())
		assert.False(t, h.Terminates())
	})
	t.Run("sent, then quit: terminated, and a late reply must not count", func(t *testing.T) {
		var h Handover
		assert.True(t, h.Send())
		h.Quit()
		assert.True(t, h.Terminates())
		assert.False(t, h.Reply(), "the runner must terminate the process")
		assert.False(t, h.Unsend())
	})
	t.Run("replied, then quit: not terminated", func(t *testing.T) {
		var h Handover
		assert.True(t, h.Send())
		assert.True(t, h.Reply())
		h.Quit()
		assert.False(t, h.Terminates())
	})
	t.Run("not taken: sent again", func(t *testing.T) {
		var h Handover
		assert.True(t, h.Send())
		assert.True(t, h.Unsend())
		assert.False(t, h.Terminates())
		assert.True(t, h.Send())
	})
	t.Run("racing quit and send agree", func(t *testing.T) {
		for range 1000 {
			var h Handover
			var sent bool
			var wg sync.WaitGroup
			wg.Go(func() { sent = h.Send() })
			wg.Go(h.Quit)
			wg.Wait()
			assert.Equal(t, sent, h.Terminates())
		}
	})
}
