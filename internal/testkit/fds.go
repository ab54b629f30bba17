package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// CountFDs counts the process's open descriptors, all and those whose
// target names match (none when match is ""), from /proc/self/fd; off
// Linux it skips the test.
func CountFDs(t testing.TB, match string) (all, matching int) {
	t.Helper()
	SkipOffLinux(t, "counts descriptors in /proc/self/fd")
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range entries {
		if match == "" {
			break
		}
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(target, match) {
			matching++
		}
	}
	return len(entries), matching
}
