package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/examples/internal/cmdtest"
)

// runMainEnv makes this test binary run the service's main (see
// TestMainServes).
const runMainEnv = "OFFLOAD_EXAMPLE_PYWORKER_MAIN"

func TestMain(m *testing.M) {
	cmdtest.RunMain(runMainEnv, main)
	goleak.VerifyTestMain(m)
}

// The command as a user runs it, from a directory with nothing of the
// example in it: it says where it listens, makes thumbnails there with
// the Python worker it carries, and on SIGTERM shuts down, exits with
// status 0, and leaves no file behind.
func TestMainServes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("pool.New refuses Subprocess workers on Windows")
	}
	t.Parallel()
	tmp := t.TempDir()
	cmd := cmdtest.Command(runMainEnv, "-addr", "127.0.0.1:0", "-workers", "1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	service := cmdtest.Start(t, cmd)

	resp, body := post(t, context.Background(), service.URL+"/thumb?width=8", encode(t, image.NewGray(image.Rect(0, 0, 32, 16))))
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	thumb, err := png.Decode(bytes.NewReader(body))
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 8, 4), thumb.Bounds())

	service.Stop(t)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the worker's files should be removed")
}
