//go:build !linux

package testkit

import (
	"errors"
	"os"
)

func holdMemfd(int) (*os.File, error) { return nil, errors.ErrUnsupported }
