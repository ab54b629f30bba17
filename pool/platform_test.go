package pool_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/offloadgo/offload/pool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// New refuses Isolation Subprocess at once where worker processes don't
// run, with an error that names the platform and matches
// errors.ErrUnsupported, and starts nothing; on Linux it makes the pool.
// (Each platform's error is checked on Linux in internal/subproc.)
func TestNewSubprocessOnThisPlatform(t *testing.T) {
	p, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess})
	if want := pool.SubprocessSupportedForTest(); want != nil {
		require.ErrorIs(t, err, errors.ErrUnsupported)
		assert.Contains(t, err.Error(), runtime.GOOS)
		assert.Nil(t, p)
		return
	}
	require.NoError(t, err)
	require.NoError(t, p.Close())
}
