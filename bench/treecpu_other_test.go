//go:build !linux

package bench

import (
	"testing"
	"time"
)

// treeCPU is not measured here: it reads Linux's /proc.
func treeCPU(testing.TB) (time.Duration, bool) { return 0, false }

var calibrationStart = time.Now()

// calibrationClock is wall time here: a busy machine makes burn shorter.
func calibrationClock() time.Duration { return time.Since(calibrationStart) }
