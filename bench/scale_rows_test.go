package bench

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each row of BenchmarkScale has as many workers as the GOMAXPROCS of its
// -cpu value, also the first row of a leaf that go test times before it
// sets GOMAXPROCS (golang/go#49980): the test binary runs two shapes once
// at -cpu 1,3, of which at least one differs from the default however
// many cores the machine has, and every row's workers metric must match
// its -cpu suffix. (-benchtime 2x: at 1x go test keeps the probing first
// call's result, made at the default GOMAXPROCS, for any leaf.)
func TestScaleRowsRunAtTheirCores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run", "^$",
		"-test.bench", "^BenchmarkScale$/^shape=(run|batch)$/^peer=(offload|floor|ceiling)$",
		"-test.cpu", "1,3", "-test.benchtime", "2x")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	row := regexp.MustCompile(`(?m)^BenchmarkScale/(\S+?)(?:-(\d+))?\s+\d+\s.*?\s([\d.]+) workers`)
	rows := row.FindAllStringSubmatch(string(out), -1)
	require.Len(t, rows, 2*4, "two shapes of two peers each, at two core counts:\n%s", out)
	for _, r := range rows {
		cores := 1
		if r[2] != "" {
			cores, err = strconv.Atoi(r[2])
			require.NoError(t, err)
		}
		workers, err := strconv.ParseFloat(r[3], 64)
		require.NoError(t, err)
		assert.Equal(t, float64(cores), workers, "%s at -cpu %d", r[1], cores)
	}
}
