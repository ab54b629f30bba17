package shmbuf

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// childEnv selects, in a re-executed test binary, the worker role of the
// cross-process tests instead of running the tests.
const childEnv = "SHMBUF_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}
