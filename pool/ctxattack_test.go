package pool_test

import (
	"testing"

	"github.com/offloadgo/offload/internal/ctxattack"
	"github.com/offloadgo/offload/pool"
)

// A caller's ctx whose methods panic or block, from their 1st call to
// their 6th, fails its own call or panics on its caller's goroutine, and
// never the process or the pool: the pool calls the ctx's methods on the
// caller's goroutine alone (natsremote's tests run the same on a Remote
// pool).
func TestFaultyContextFailsItsOwnCallOnly(t *testing.T) {
	t.Parallel()
	for _, iso := range isolations {
		t.Run(iso.String(), func(t *testing.T) {
			t.Parallel()
			ctxattack.Attack(t, newIsolatedPool(t, iso, pool.Options{Workers: 1}))
		})
	}
}
