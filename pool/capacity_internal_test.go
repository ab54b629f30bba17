package pool

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A pool's capacity for any number of workers, as SetWorkers or a Remote
// pool's live slots make it, follows the queue policy New derived from the Options.
func TestCapacityForWorkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		maxQueue int
		workers  int
		want     int
	}{
		{0, 3, 12},                        // auto: 3 + 3²
		{0, 0, 0},                         // no workers, no capacity
		{0, math.MaxInt / 2, math.MaxInt}, // saturates
		{5, 3, 8},
		{5, 1, 6},
		{NoQueue, 1, 1}, // once MaxInt: NoQueue's -2 was added as a queue
		{NoQueue, 3, 3},
		{Unbounded, 3, -1},
		{Unbounded, 0, 0},
		{math.MaxInt, 3, math.MaxInt},
	}
	for _, tt := range tests {
		s, err := Options{Workers: 2, MaxQueue: tt.maxQueue}.fillDefaults()
		assert.NoError(t, err)
		assert.Equal(t, tt.want, s.queue.capacityFor(tt.workers), "MaxQueue %d, %d workers", tt.maxQueue, tt.workers)
	}
}

// setWorkers keeps MaxQueue what Options says of it: auto follows, a set
// one stays (lowered only to fit under math.MaxInt).
func TestSettingsSetWorkers(t *testing.T) {
	t.Parallel()
	s, err := Options{Workers: 4, MinWorkers: 3}.fillDefaults()
	assert.NoError(t, err)
	s.setWorkers(2)
	assert.Equal(t, Options{Workers: 2, MinWorkers: 2, MaxQueue: 4, IdleTimeout: DefaultIdleTimeout}, s.Options)
	assert.Equal(t, 6, s.capacity)
	big, err := Options{Workers: 2, MaxQueue: math.MaxInt - 2}.fillDefaults()
	assert.NoError(t, err)
	big.setWorkers(4)
	assert.Equal(t, math.MaxInt, big.capacity)
	assert.Equal(t, math.MaxInt-4, big.MaxQueue)
	big.setWorkers(2)
	assert.Equal(t, math.MaxInt-2, big.MaxQueue, "the MaxQueue asked for, not one lowered on the way")
}
