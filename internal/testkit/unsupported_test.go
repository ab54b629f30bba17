package testkit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Only an error matching errors.ErrUnsupported skips; nil and any other
// error are left to the caller.
func TestSkipUnsupported(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		skip bool
	}{
		"unsupported, wrapped": {fmt.Errorf("pool: not on plan9: %w", errors.ErrUnsupported), true},
		"other error":          {errors.New("pool: broken"), false},
		"nil":                  {nil, false},
	} {
		var inner *testing.T
		reached := false
		t.Run(name, func(t *testing.T) {
			inner = t
			SkipUnsupported(t, tc.err)
			reached = true
		})
		assert.Equal(t, tc.skip, inner.Skipped(), name)
		assert.Equal(t, !tc.skip, reached, name)
	}
}
