package testkit

import (
	"context"
	"testing"
	"time"
)

// CtxBound is how long a test's Ctx lives at most: a guard against a hang,
// not a speed bound (in CI, beside other packages' -race tests, verifying
// nodes has taken over 10 s).
const CtxBound = time.Minute

// Ctx is t.Context() bounded by CtxBound: it ends with the test, or when a
// hang has outlasted the bound, so that a stuck call fails the test with
// its own error instead of the binary's timeout.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), CtxBound)
	t.Cleanup(cancel)
	return ctx
}
