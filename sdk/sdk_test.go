package sdk

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The built-in SDKs are the files in this directory, and WriteTo writes
// them as the workers import them.
func TestWriteTo(t *testing.T) {
	dir := t.TempDir()
	for name, base := range map[string]string{Python: "offload_worker.py", Node: "offload-worker.mjs"} {
		want, err := os.ReadFile(filepath.FromSlash(name))
		require.NoError(t, err)
		got, err := File(name)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s", name)
		path, err := WriteTo(dir, name)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, base), path)
		written, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, written), "%s", name)
	}
	_, err := WriteTo(dir, "ruby/offload.rb")
	assert.ErrorContains(t, err, "no SDK")
}
