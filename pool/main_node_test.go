package pool_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A binary asked to serve as a worker node that calls pool.Main rather
// than natsremote.Main says what to call and exits 2, rather than run as
// if nothing were asked.
func TestMainAsNodeSaysToCallNatsremoteMain(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OFFLOAD_NATS_URL=nats://127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "output: %s", out)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), "OFFLOAD_NATS_URL is set")
	assert.Contains(t, string(out), "call natsremote.Main() instead")
}
