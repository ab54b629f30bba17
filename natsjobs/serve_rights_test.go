package natsjobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// A Serve whose user may not hear Cancels (an enqueuer's) or ask for
// jobs returns at once, not when its ctx ends, with an error naming the
// subject refused and WorkerPermissions, matching
// nats.ErrPermissionViolation; it runs nothing.
func TestServeWithoutAWorkersRightsSaysWhy(t *testing.T) {
	t.Parallel()
	s := rolesServer(t, "serve")
	o := natsjobs.Options{Name: "serve"}
	open(t, connectAs(t, s, "admin"), o)
	for user, subject := range map[string]string{
		"enqueuer": `"offload.jobs.serve.cancel"`,
		"no-fetch": `"$JS.API.CONSUMER.MSG.NEXT.OFFLOAD_JOBS_serve.workers"`,
	} {
		t.Run(user, func(t *testing.T) {
			t.Parallel()
			q, _ := openAs(t, s, user, o)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var err error
			testkit.Within(t, 20*time.Second, "Serve refused", func() {
				err = natsjobs.Serve(ctx, q, newPool(t, pool.Options{Workers: 1}), natsjobs.ServeOptions{})
			})
			require.ErrorIs(t, err, nats.ErrPermissionViolation)
			require.NoError(t, ctx.Err(), "it did not wait for ctx")
			assert.Contains(t, err.Error(), subject)
			assert.Contains(t, err.Error(), `WorkerPermissions("serve", "")`)
			assert.Equal(t, 1, strings.Count(err.Error(), "natsjobs: "), "one prefix: %v", err)
			t.Log(err)
		})
	}
}
