//go:build !unix && !windows

package cpuclock

import (
	"errors"
	"time"
)

// Fine is false where no CPU-time clock is read.
const Fine = false

// Process is not measured here.
func Process() (time.Duration, error) { return 0, errors.ErrUnsupported }

// Thread is not measured here.
func Thread() (time.Duration, error) { return 0, errors.ErrUnsupported }
