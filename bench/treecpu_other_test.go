//go:build !linux

package bench

import (
	"testing"
	"time"
)

// treeCPU is not measured here: it reads Linux's /proc.
func treeCPU(testing.TB) (time.Duration, bool) { return 0, false }
