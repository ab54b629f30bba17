package orders

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/offloadgo/offload/pool"
)

func TestMain(m *testing.M) {
	pool.Main() // the test binary is also its Subprocess pools' worker
	goleak.VerifyTestMain(m)
}
