package testkit

import (
	"runtime"
	"testing"
)

// SkipOffLinux skips t on any platform but Linux, saying that what makes
// the test needs Linux (say, "counts descriptors in /proc/self/fd"). For
// tests whose subject runs elsewhere too, but whose way of checking it is
// Linux's.
func SkipOffLinux(t testing.TB, needs string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("on %s: this test %s, which is Linux's", runtime.GOOS, needs)
	}
}
