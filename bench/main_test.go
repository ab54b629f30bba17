package bench

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/offloadgo/offload/natsremote"
)

func TestMain(m *testing.M) {
	floorResponderMain() // or the Remote floor's responder (remote_node_test.go)
	natsremote.Main()    // the benchmark binary is also its Subprocess pools' worker, and Remote pools' node
	goleak.VerifyTestMain(m,
		// ants starts its default pool's goroutines at init.
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}
