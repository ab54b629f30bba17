package bench

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/pool"
)

func TestMain(m *testing.M) {
	floorResponderMain() // or the Remote floor's responder (remote_node_test.go)
	// The benchmark binary is also its Subprocess pools' worker, and
	// Remote pools' node; they continue traces (BenchmarkTracedRun).
	natsremote.Main(pool.MainOptions{Tracer: workerTracer})
	goleak.VerifyTestMain(m,
		// ants starts its default pool's goroutines at init.
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}
