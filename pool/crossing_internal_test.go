package pool

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offloadgo/offload/transfer"
)

// A Remote pool's refusal names the node, in either direction; an
// InProcess pool refuses nothing.
func TestUnfitnessByIsolation(t *testing.T) {
	t.Parallel()
	zoomIn := reflect.TypeFor[struct {
		Level int
		cache map[string]int
	}]()
	in := unfitnessOf("zoom", zoomIn, reflect.TypeFor[int]())
	assert.EqualError(t, in.on(onNode),
		`pool: task "zoom": In type struct { Level int; cache map[string]int }: field cache (unexported) would arrive zeroed on a worker node`)
	assert.EqualError(t, in.on(inProcess),
		`pool: task "zoom": In type struct { Level int; cache map[string]int }: field cache (unexported) would arrive zeroed in a worker process`)
	assert.NoError(t, in.on(inGoroutine))
	assert.True(t, errors.Is(in.on(onNode), transfer.ErrNotTransferable))

	out := unfitnessOf("zoom", reflect.TypeFor[int](), reflect.TypeFor[struct{ C chan int }]())
	assert.EqualError(t, out.on(onNode),
		`pool: task "zoom": Out type struct { C chan int }: field C (chan int) can't cross from a worker node: msgpack can't encode a chan`)

	assert.Equal(t, unfitness{}, unfitnessOf("fine", reflect.TypeFor[int](), reflect.TypeFor[[]string]()))
}
