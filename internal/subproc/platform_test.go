package subproc

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every platform's answer is checked here, on whatever platform the tests
// run: Linux runs Subprocess workers; the others get an error at New that
// names them, says what to use instead, and matches errors.ErrUnsupported.
func TestPlatformSupport(t *testing.T) {
	t.Parallel()
	require.NoError(t, PlatformSupport("linux"))
	for goos, advice := range map[string]string{
		"windows": "use InProcess, or Remote",
		"darwin":  "needs Linux",
		"freebsd": "needs Linux",
		"openbsd": "needs Linux",
	} {
		err := PlatformSupport(goos)
		require.Error(t, err, goos)
		assert.ErrorIs(t, err, errors.ErrUnsupported, goos)
		assert.Contains(t, err.Error(), goos, "the error names the platform")
		assert.Contains(t, err.Error(), advice, goos)
		assert.Contains(t, err.Error(), "InProcess", "%s: the error says what works instead", goos)
	}
}

// New refuses a Subprocess pool exactly where PlatformSupport says so, and
// the refusal is the error the caller can match.
func TestNewOnThisPlatform(t *testing.T) {
	t.Parallel()
	tr, err := New(Options{}, t.Context(), nil)
	if want := PlatformSupport(runtime.GOOS); want != nil {
		require.ErrorIs(t, err, errors.ErrUnsupported)
		assert.Equal(t, want.Error(), err.Error())
		assert.Nil(t, tr)
		return
	}
	require.NoError(t, err)
	assert.NotNil(t, tr)
}
