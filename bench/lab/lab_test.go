package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/pool"
)

// TestMain lets the test binary be the lab's server and its pool workers,
// as the lab binary is.
func TestMain(m *testing.M) {
	natsremote.Main()
	jobsWorkerMain()
	if raw := os.Getenv(serverEnv); raw != "" {
		if err := serve(raw); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, testkit.IgnoreSourceSetup) // the durable-job rows
}

// TestQuick runs the lab's -quick smoke run and checks what holds on any
// machine: the table has every row, -out's overview has a bar for each row
// that ran, nothing was shed or failed where nothing should be, every 503
// carries Retry-After, overload is met by shedding without piling up
// goroutines, and the run was held against every bar. Whether the bars
// hold is the machine's figure, not offload's behaviour: the test logs
// them (see bars.go) and asserts none.
func TestQuick(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	dir := t.TempDir()
	rows, err := run(ctx, []string{"-quick", "-out", dir}, &out, io.Discard)
	require.NoError(t, err)
	t.Log("\n" + out.String())

	_, chart := parseOverview(t, filepath.Join(dir, overviewFile))
	reference, phases := 0, 0
	for _, r := range rows {
		switch {
		case r.NA != "":
		case strings.HasPrefix(r.Group, "saturated"): // not in the overview: phases of another capacity
		case r.Offered > 0:
			phases++
		default:
			reference++
		}
	}
	assert.Len(t, chart.bars(t, "fast-p99", "width"), reference, "overview: a /fast p99 bar per reference row that ran")
	assert.Len(t, chart.bars(t, "goodput", "height"), phases, "overview: a goodput bar per overload phase")

	want := 0
	for _, sc := range scenarios("pool1") {
		want += max(1, len(sc.Phases))
	}
	require.Len(t, rows, want, "one row per reference scenario and per overload phase")
	table := out.String()
	for _, r := range rows {
		assert.Contains(t, table, r.Name)
		assert.Contains(t, table, "== "+r.Group)
	}

	overload, saturated := map[string][]row{}, map[string][]row{}
	for _, r := range rows {
		if strings.HasPrefix(r.Group, "overload") {
			overload[r.Group] = append(overload[r.Group], r)
			continue
		}
		if strings.HasPrefix(r.Group, "saturated") {
			saturated[r.Group] = append(saturated[r.Group], r)
			continue
		}
		if r.NA != "" {
			// Only subprocess rows may be missing, and only while the pool
			// can't make subprocess workers.
			assert.Contains(t, r.Name, "subprocess", "%s/%s: %s", r.Group, r.Name, r.NA)
			continue
		}
		assert.Zero(t, r.Shed+r.Errors, "%s/%s: jobs shed or failed", r.Group, r.Name)
		if strings.Contains(r.Name, "job") {
			assert.Positive(t, r.Job.N, "%s/%s: no job finished", r.Group, r.Name)
		}
	}

	require.Len(t, overload, 3)
	for group, phases := range overload {
		require.Len(t, phases, len(overloadPhases), group)
		clientShed, serverShed := 0, 0
		for _, r := range phases {
			assert.Empty(t, r.NA, group)
			assert.Zero(t, r.ShedNoRA, "%s %s: a 503 without Retry-After", group, r.Name)
			clientShed += r.Shed
			serverShed += r.ShedServer.N
		}
		// A 503 sent at a phase's end may be counted in the next phase by
		// one side, or after the last reading by the server.
		assert.InDelta(t, clientShed, serverShed, 5, "%s: the server timed the 503s Shed answered", group)
		switch {
		case strings.HasPrefix(group, "overload (a)"):
			errs := 0
			for _, r := range phases {
				errs += r.Errors + r.Shed
			}
			assert.Positive(t, errs, "%s: an unbounded queue under 10x load makes clients give up", group)
		case strings.HasPrefix(group, "overload (c)"):
			assert.Positive(t, phases[4].Shed, "%s: 10x is shed", group)
			last := phases[len(phases)-1]
			assert.Less(t, last.Goroutines, phases[0].Goroutines+200, "%s: goroutines stay flat", group)
		}
	}

	// Whether the saturated rows shed, and what the probe said, is the
	// machine's figure; that they ran, and were probed, is the lab's.
	require.Len(t, saturated, 3+len(saturatedMaxLag)) // and two of ShedCPU
	for group, phases := range saturated {
		require.Len(t, phases, len(saturatedPhases), group)
		probes := 0
		for _, r := range phases {
			assert.Empty(t, r.NA, group)
			assert.Zero(t, r.ShedNoRA, "%s %s: a 503 without Retry-After", group, r.Name)
			probes += r.Probe.N
			assert.Equal(t, r.Probe.N, r.ProbeReady+r.ProbeNot+r.ProbeLost, "%s %s: every probe counted once", group, r.Name)
		}
		assert.Positive(t, probes, "%s: the readiness probe was asked", group)
		if strings.Contains(group, "no Shed") {
			assert.Zero(t, phases[0].Shed+phases[1].Shed, "%s: nothing sheds without MaxLag", group)
		}
	}
	assert.Contains(t, table, "== the readiness probe")

	bars := judge(rows, capacity(200*time.Millisecond))
	assert.Len(t, bars, 2+3+2, "every bar judged: two reference rows, each overload group's 503s, (c)'s goodput and recovery")
	for _, b := range bars {
		assert.Contains(t, table, b.Claim, "the report names the bar")
		if !b.Holds {
			t.Logf("bar missed on this machine (reported, not asserted): %s: %s", b.Claim, b.Got)
		}
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-duration", "0"}, {"-rate", "-1"}, {"-repeat", "0"}, {"-overload-pool", "pool2"}, {"extra"}, {"-nosuch"}} {
		_, err := run(context.Background(), args, io.Discard, io.Discard)
		assert.Error(t, err, "%q", args)
	}
}

func TestPoolSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode string
		want poolMode
		ok   bool
	}{
		{"pool1", poolMode{pool.InProcess, 1, 0}, true},
		{"proc2", poolMode{pool.Subprocess, 2, 0}, true},
		{"remote2", poolMode{pool.Remote, 2, 0}, true},
		{"proc1nice", poolMode{pool.Subprocess, 1, labNice}, true},
		{"remote2nice", poolMode{pool.Remote, 2, labNice}, true},
		{"pool1nice", poolMode{}, false}, // goroutines can't be niced
		{"pool0", poolMode{}, false},
		{"poolx", poolMode{}, false},
		{"inline", poolMode{}, false},
	}
	for _, tt := range tests {
		m, ok := poolSpec(tt.mode)
		assert.Equal(t, tt.ok, ok, tt.mode)
		if ok {
			assert.Equal(t, tt.want, m, tt.mode)
		}
	}
}
