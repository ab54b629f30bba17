package natsremote_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// permsPool is the pool the permission tests serve, on a server whose
// users each lack one of a node's rights (see permsServer).
const permsPool = "perms"

// permsServer is an embedded server (listening, for node processes) with
// a user for each way a node's credentials can be wrong, each named for
// the subject its NodePermissions("perms", "worker") lacks, and "svc", a
// submitter.
func permsServer(t *testing.T) *embedded.Server {
	t.Helper()
	right := natsremote.NodePermissions(permsPool, "worker")
	without := func(list []string, drop string) []string {
		var out []string
		for _, s := range list {
			if s != drop {
				out = append(out, s)
			}
		}
		return out
	}
	other := natsremote.NodePermissions(permsPool, "other")
	return startServer(t, embedded.Options{Listen: true, Users: []embedded.User{
		asUser("svc", natsremote.SubmitterPermissions(permsPool, "")),
		asUser("worker", right),
		asUser("other-name", other), // the node's subject is another name's
		asUser("no-discover", natsremote.Permissions{Publish: right.Publish, Subscribe: without(right.Subscribe, "offload.perms.discover")}),
		asUser("no-adverts", natsremote.Permissions{Publish: without(right.Publish, "offload.perms.adverts"), Subscribe: right.Subscribe}),
		asUser("no-inbox", natsremote.Permissions{Publish: right.Publish, Subscribe: right.Subscribe}), // no allow_responses
	}})
}

// A node whose NATS user may not subscribe to its subjects, or publish
// its adverts, can never join a pool: Serve says so at once, naming the
// subject refused and NodePermissions, with an error matching
// nats.ErrPermissionViolation, and serves nothing.
func TestServeRefusesCredentialsThatCannotServe(t *testing.T) {
	t.Parallel()
	s := permsServer(t)
	for user, subject := range map[string]string{
		"other-name":  "offload.perms.node.worker.",
		"no-discover": `"offload.perms.discover"`,
		"no-adverts":  `"offload.perms.adverts"`,
	} {
		t.Run(user, func(t *testing.T) {
			t.Parallel()
			nc := connectAs(t, s, user)
			var err error
			testkit.Within(t, 10*time.Second, "Serve with the wrong credentials", func() {
				err = natsremote.Serve(context.Background(), nc, natsremote.ServeOptions{
					Pool: permsPool, Name: "worker", Heartbeat: testHeartbeat, Logger: quiet, Local: pool.Options{Workers: 1},
				})
			})
			require.Error(t, err)
			require.ErrorIs(t, err, nats.ErrPermissionViolation)
			assert.Contains(t, err.Error(), subject, "the error names the subject refused")
			assert.Contains(t, err.Error(), `NodePermissions("perms", "worker")`, "and what the user needs")
			assert.NotContains(t, strings.TrimPrefix(err.Error(), "natsremote: "), "natsremote: ", "one prefix")
			t.Log(err)
		})
	}
}

// A node whose user may not answer its submitters (publish on their
// inboxes) joins no pool either; Serve can't tell at its start (it does
// not know the inboxes), so the node logs an error naming the inbox and
// NodePermissions as soon as NATS refuses its first answer to a ping.
func TestNodeThatCannotAnswerSaysWhy(t *testing.T) {
	t.Parallel()
	s := permsServer(t)
	log := &testkit.Buffer{}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelError}))
	nc := connectAs(t, s, "no-inbox")
	serveOn(t, nc, natsremote.ServeOptions{Pool: permsPool, Name: "worker", Logger: logger, Local: pool.Options{Workers: 1}})
	remotePool(t, connectAs(t, s, "svc"), permsPool, pool.Options{Workers: 1}) // it pings the node
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "NodePermissions") }, time.Minute, time.Millisecond,
		"the node says why it can't answer")
	assert.Contains(t, log.String(), `_INBOX.`, "naming the inbox")
	t.Log(log.String())
}

// natsremote.Main, the node of OFFLOAD_NATS_URL, exits with status 2 when
// its credentials can't serve its subjects, and says why on stderr.
func TestNodeProcessWithWrongCredentialsExits2(t *testing.T) {
	t.Parallel()
	s := permsServer(t)
	u, err := url.Parse(s.ClientURL())
	require.NoError(t, err)
	u.User = url.UserPassword("other-name", "other-name-pw")
	n := startNode(t, u.String(), permsPool, "1", natsremote.EnvName+"=worker")
	state := n.Exit(t, time.Minute)
	said := n.Output.String()
	assert.Equal(t, 2, state.ExitCode(), "it said:\n%s", said)
	assert.Contains(t, said, `"offload.perms.node.worker.`)
	assert.Contains(t, said, fmt.Sprintf("NodePermissions(%q, %q)", permsPool, "worker"))
	assert.NotContains(t, said, "natsremote: serving", "it never said it serves")
}
