//go:build linux

package workerproc

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

// startHog has worker p start a memory hog of how ("anon:N" or
// "memfd:N") and waits until it holds its memory; it returns its pid.
func startHog(t testing.TB, p *Process, logs *logBuffer, how string) int {
	t.Helper()
	got := roundTrip(t, p.Conn(), Frame{Kind: kindHog, Body: []byte(how)})
	pid, err := strconv.Atoi(string(got.Body))
	require.NoError(t, err, "reply %q", got.Body)
	watchProcess(t, pid)
	roundTrip(t, p.Conn(), Frame{Kind: kindHogHold})
	held := fmt.Sprintf("memory hog %d holds", pid)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), held) },
		20*time.Second, time.Millisecond, "hog never held its memory:\n%s", logs.String())
	return pid
}

// TestTreeSampler: what the sampler counts beyond a worker's RSS.
func TestTreeSampler(t *testing.T) {
	t.Parallel()
	t.Run("a child's anonymous memory, by its Pss", func(t *testing.T) {
		t.Parallel()
		var logs logBuffer
		p := startWorker(t, Spec{Logger: logs.logger()})
		hog := startHog(t, p, &logs, "anon:64")
		m, err := newTreeSampler().sample(p.PID(), math.MaxInt64)
		require.NoError(t, err)
		assert.Equal(t, 1, m.Descendants)
		assert.False(t, m.Proportional, "within the budget, the RSS is enough")
		assert.GreaterOrEqual(t, m.Resident, int64(64*mib))
		assert.Zero(t, m.Memfd)
		m, err = newTreeSampler().sample(p.PID(), 64*mib)
		require.NoError(t, err)
		assert.Equal(t, 1, m.Descendants)
		assert.True(t, m.Proportional, "past the budget, the Pss is measured")
		assert.GreaterOrEqual(t, m.Resident, int64(64*mib))
		assert.Zero(t, m.Memfd)
		found, err := newTreeSampler().descendants(p.PID(), nil)
		require.NoError(t, err)
		assert.Equal(t, []int{hog}, found)
	})
	t.Run("a memfd never mapped, by its bytes", func(t *testing.T) {
		t.Parallel()
		p := startWorker(t, Spec{})
		roundTrip(t, p.Conn(), Frame{Kind: kindMemfd, Body: []byte("48")})
		m, err := newTreeSampler().sample(p.PID(), math.MaxInt64)
		require.NoError(t, err)
		assert.Zero(t, m.Descendants)
		assert.GreaterOrEqual(t, m.Memfd, int64(48*mib))
		rss, err := p.RSS()
		require.NoError(t, err)
		assert.Less(t, rss, int64(48*mib), "unmapped, the memfd is in no RSS")
	})
	t.Run("a memfd mapped and touched, once: in the RSS", func(t *testing.T) {
		t.Parallel()
		p := startWorker(t, Spec{})
		roundTrip(t, p.Conn(), Frame{Kind: kindMemfd, Body: []byte("48 mapped")})
		m, err := newTreeSampler().sample(p.PID(), math.MaxInt64)
		require.NoError(t, err)
		assert.Less(t, m.Memfd, int64(mib), "counted in the RSS already")
		rss, err := p.RSS()
		require.NoError(t, err)
		assert.GreaterOrEqual(t, rss, int64(48*mib))
	})
	t.Run("a child's memfd", func(t *testing.T) {
		t.Parallel()
		var logs logBuffer
		p := startWorker(t, Spec{Logger: logs.logger()})
		startHog(t, p, &logs, "memfd:48")
		m, err := newTreeSampler().sample(p.PID(), math.MaxInt64)
		require.NoError(t, err)
		assert.Equal(t, 1, m.Descendants)
		assert.GreaterOrEqual(t, m.Memfd, int64(48*mib))
	})
	t.Run("gone", func(t *testing.T) {
		t.Parallel()
		p := startWorker(t, Spec{})
		p.Kill()
		waitDone(t, p)
		_, err := newTreeSampler().sample(p.PID(), math.MaxInt64)
		assert.Error(t, err)
	})
}

// TestDescendantsByScan: without children files, a scan of /proc finds
// the same descendants as the walk: a worker's children, and from this
// process, whose descendants are the workers of every test running, its
// grandchildren too.
func TestDescendantsByScan(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	p := startWorker(t, Spec{Logger: logs.logger()})
	children := []int{startHog(t, p, &logs, "anon:1")}
	sleeper := roundTrip(t, p.Conn(), Frame{Kind: kindSpawn}) // sleep 30
	pid, err := strconv.Atoi(string(sleeper.Body))
	require.NoError(t, err)
	watchProcess(t, pid)
	children = append(children, pid)
	slices.Sort(children)

	for _, scan := range []bool{false, true} {
		s := newTreeSampler()
		s.scan = scan
		found, err := s.descendants(p.PID(), nil)
		require.NoError(t, err)
		slices.Sort(found)
		assert.Equal(t, children, found, "scan %v", scan)
		found, err = s.descendants(os.Getpid(), nil)
		require.NoError(t, err)
		assert.Subset(t, found, append([]int{p.PID()}, children...), "scan %v", scan)
	}
}

// TestTreeInterval: tree samples come every treePoll, spaced out so that
// costly ones take at most a tenth of the time.
func TestTreeInterval(t *testing.T) {
	t.Parallel()
	assert.Equal(t, treePoll, treeInterval(0))
	assert.Equal(t, treePoll, treeInterval(5*time.Millisecond))
	assert.Equal(t, 500*time.Millisecond, treeInterval(50*time.Millisecond))
}
