package natsjobs

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// serveRights checks that the server lets a Serve do what it first asks:
// subscribe to Cancel's subject, and ask the consumer for jobs. NATS
// says it refused one only in an asynchronous error, and a Serve whose
// user lacks a right would otherwise serve nothing and not say why.
// After each, a round trip to the server brings any refusal; the check
// returns it, naming the subject and WorkerPermissions, matching
// nats.ErrPermissionViolation.
type serveRights struct {
	nc     *nats.Conn
	queue  string
	before error // the connection's last error when Serve started
	// fetchChecked: the first fetch, the one checked, is out.
	fetchChecked bool
}

// rightsCheckWait bounds the round trip of a check: a server that is
// away then doesn't hold Serve up (and the check passes).
const rightsCheckWait = 2 * time.Second

func newServeRights(q *Queue) *serveRights {
	nc := q.js.Conn()
	return &serveRights{nc: nc, queue: q.o.Name, before: nc.LastError()}
}

// allowed returns the server's refusal to let this Serve what (to)
// subject, if it refused it since Serve started.
func (r *serveRights) allowed(ctx context.Context, what, subject string) error {
	ctx, cancel := context.WithTimeout(ctx, rightsCheckWait)
	defer cancel()
	if r.nc.FlushWithContext(ctx) != nil {
		return nil
	}
	says := publishOn(subject)
	if what == "subscribe to" {
		says = subscriptionTo(subject)
	}
	err := refusal(r.nc, r.before, says)
	if err == nil {
		return nil
	}
	return fmt.Errorf("natsjobs: serve queue %q: NATS refused to let it %s %q: its user needs the permissions WorkerPermissions(%q, %q) lists: %w",
		r.queue, what, subject, r.queue, r.nc.Opts.InboxPrefix, err)
}

// firstFetch checks the first fetch, once it is out.
func (r *serveRights) firstFetch(ctx context.Context) error {
	if r.fetchChecked {
		return nil
	}
	r.fetchChecked = true
	return r.allowed(ctx, "ask for jobs on", apiConsumer("MSG.NEXT", workStreamName(r.queue), workersConsumer))
}
