package pool

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestQueueDelayLimits(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name             string
		q                QueueDelay
		unit             time.Duration
		target, interval time.Duration
	}{
		{"fixed", QueueDelay{Target: 5 * ms, Interval: 100 * ms}, 200 * ms, 5 * ms, 100 * ms},
		{"scaled above the floors", DefaultQueueDelay(), 200 * ms, 400 * ms, 800 * ms},
		{"scaled target, floor interval", DefaultQueueDelay(), 10 * ms, 20 * ms, 100 * ms},
		{"floors above the scaled", DefaultQueueDelay(), ms, 5 * ms, 100 * ms},
		{"unit not known yet: floors", DefaultQueueDelay(), 0, 5 * ms, 100 * ms},
		{"scaled only, unit not known yet: fail nothing", QueueDelay{TargetDrainTimes: 1, IntervalDrainTimes: 4}, 0, 0, 0},
		{"interval never below target", QueueDelay{TargetDrainTimes: 2, Interval: 100 * ms}, 200 * ms, 400 * ms, 400 * ms},
	}
	for _, tt := range tests {
		target, interval := tt.q.limits(tt.unit)
		assert.Equal(t, tt.target, target, tt.name)
		assert.Equal(t, tt.interval, interval, tt.name)
	}
}

func TestQueueDelayOverdue(t *testing.T) {
	t.Parallel()
	ms := int64(time.Millisecond)
	q := QueueDelay{Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond}
	// Waited 50 ms in a queue empty 60 ms ago: a burst, within Interval.
	limit, late := q.overdue(0, 50*ms, -10*ms, 0)
	assert.False(t, late)
	assert.Equal(t, 100*time.Millisecond, limit)
	// The same wait in a queue not empty for 150 ms: standing, over Target.
	limit, late = q.overdue(0, 50*ms, -100*ms, 0)
	assert.True(t, late)
	assert.Equal(t, 5*time.Millisecond, limit)
	// Scaled only, before the first task finished: nothing is failed.
	_, late = QueueDelay{TargetDrainTimes: 1, IntervalDrainTimes: 4}.overdue(0, 10_000*ms, -10_000*ms, 0)
	assert.False(t, late)
}
