package subproc

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every platform's answer is checked here, on whatever platform the tests
// run: Linux, macOS and the BSDs run Subprocess workers; the others get an
// error at New that names them, says what to use instead, and matches
// errors.ErrUnsupported.
func TestPlatformSupport(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "darwin", "freebsd", "netbsd", "openbsd"} {
		require.NoError(t, PlatformSupport(goos), goos)
	}
	for goos, advice := range map[string]string{
		"windows": "use InProcess, or Remote",
		"plan9":   "runs on Linux, macOS",
		"solaris": "runs on Linux, macOS",
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
	assertNewAsSupport(t, PlatformSupport(runtime.GOOS), tr, err)
}

// A MemoryLimit is enforced on Linux only; elsewhere the error names the
// platform and the option, and matches errors.ErrUnsupported.
func TestMemoryLimitSupport(t *testing.T) {
	t.Parallel()
	require.NoError(t, MemoryLimitSupport("linux"))
	for _, goos := range []string{"darwin", "freebsd", "netbsd", "openbsd"} {
		err := MemoryLimitSupport(goos)
		require.ErrorIs(t, err, errors.ErrUnsupported, goos)
		assert.Contains(t, err.Error(), goos)
		assert.Contains(t, err.Error(), "MemoryLimit")
	}
}

// New refuses a MemoryLimit exactly where MemoryLimitSupport says so,
// instead of running workers without one.
func TestNewMemoryLimitOnThisPlatform(t *testing.T) {
	t.Parallel()
	if PlatformSupport(runtime.GOOS) != nil {
		t.Skip("no worker processes on " + runtime.GOOS)
	}
	tr, err := New(Options{MemoryLimit: 64 << 20}, t.Context(), nil)
	assertNewAsSupport(t, MemoryLimitSupport(runtime.GOOS), tr, err)
}

// assertNewAsSupport checks New's answer against a support check's: where
// that refuses (want is its error), New fails with the same error, which
// matches errors.ErrUnsupported; elsewhere New succeeds.
func assertNewAsSupport(t *testing.T, want error, tr *ProcessCarrier, err error) {
	t.Helper()
	if want != nil {
		require.ErrorIs(t, err, errors.ErrUnsupported)
		assert.Equal(t, want.Error(), err.Error())
		assert.Nil(t, tr)
		return
	}
	require.NoError(t, err)
	assert.NotNil(t, tr)
}
