package testkit

import (
	"errors"
	"testing"
)

// SkipUnsupported skips t when err says the platform lacks what the test
// needs (it matches errors.ErrUnsupported, as New's refusal of Subprocess
// workers off Linux does), with err as the reason. Any other err, nil
// included, is left to the caller to check.
func SkipUnsupported(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err.Error())
	}
}
