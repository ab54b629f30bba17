package subproc

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/workerproc"
)

// envStartMode makes a worker process of this test binary fail its start:
// "exit" exits at once, "silent" never says hello.
const envStartMode = "OFFLOAD_TEST_SUBPROC_START"

// TestMain makes the test binary the worker of the tests' carriers (see
// parent_backoff_test.go), and fails the package's tests if any goroutine
// they started is still running when they end.
func TestMain(m *testing.M) {
	if os.Getenv(workerproc.EnvWorker) == "1" {
		switch os.Getenv(envStartMode) {
		case "exit":
			fmt.Fprintln(os.Stderr, "worker: told to fail its start")
			os.Exit(1)
		case "silent":
			select {}
		}
	}
	if code, worker := ServeWorker(nil); worker {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
