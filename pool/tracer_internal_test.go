package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Main takes at most one MainOptions: more is a programming error.
func TestMainOptionsAtMostOne(t *testing.T) {
	assert.Equal(t, MainOptions{}, mainOptions(nil))
	assert.Nil(t, mainOptions(nil).extractor(), "no Tracer: the carrier is not read")
	o := MainOptions{Tracer: nil}
	assert.Equal(t, o, mainOptions([]MainOptions{o}))
	assert.PanicsWithValue(t, "pool: Main takes at most one MainOptions", func() { mainOptions([]MainOptions{o, o}) })
}
