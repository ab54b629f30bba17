package natsjobs

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// puller asks the consumer for a Serve's jobs, as many as the pool has
// free slots, through subscriptions that last the Serve's life (lanes):
// one per request out, reused for the next. A subscription per fetch
// would cost each job a subscribe, an unsubscribe, a goroutine and
// timers; a lane with one request out at a time keeps every job and
// status that comes on it attributable to that request, so that the
// slots a request did not fill are given back exactly.
type puller struct {
	s       *server
	subject string // where pull requests go: the consumer's next-message API

	mu      sync.Mutex
	stopped bool // jobs that come now go straight back
	lanes   []*lane
	// trouble: the server ended a request for another reason than its
	// expiry (no consumer, no server): the next waits troubleWait.
	trouble bool
	ended   chan struct{} // a token when a request ends
}

// lane is a subscription for one request at a time. Its fields are
// p.mu's.
type lane struct {
	inbox   string
	sub     *nats.Subscription
	out     bool      // a request is out
	left    int       // the jobs it may still bring (reserved in s.mine)
	expires time.Time // when it has surely ended, answered or not
	retired bool      // its request was taken as lost: what comes is stale
}

// fetchGrace is how long past its expiry a request out is waited for
// before it is taken as lost (the server restarted, say) without the
// server's word.
const fetchGrace = time.Second

func newPuller(s *server) *puller {
	c := s.q.workers.CachedInfo()
	return &puller{s: s, ended: make(chan struct{}, 1),
		subject: "$JS.API.CONSUMER.MSG.NEXT." + c.Stream + "." + c.Name}
}

// idleLane returns a lane with no request out, waiting for one (or
// making one, up to one per slot of the pool); nil once ctx ends or p
// stops. A
// lane whose request outlived its expiry unanswered is retired.
func (p *puller) idleLane(ctx context.Context) (*lane, error) {
	for {
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return nil, nil
		}
		next := p.retireLost(time.Now())
		for _, l := range p.lanes {
			if !l.out {
				p.mu.Unlock()
				return l, nil
			}
		}
		if len(p.lanes) < max(1, p.s.p.Load().MaxWorkers) {
			l, err := p.newLane()
			p.mu.Unlock()
			return l, err
		}
		p.mu.Unlock()
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-p.ended:
		case <-t.C:
		}
		t.Stop()
	}
}

// retireLost retires the lanes whose request outlived its expiry
// unanswered (its consumer's leader died with it, say), giving their
// slots back, and returns the earliest expiry of the requests still out
// (zero if none). p.mu is held.
func (p *puller) retireLost(now time.Time) (next time.Time) {
	for _, l := range slices.Clone(p.lanes) {
		switch {
		case !l.out:
		case !now.Before(l.expires):
			p.retire(l)
			p.trouble = true
		case next.IsZero() || l.expires.Before(next):
			next = l.expires
		}
	}
	return next
}

// retireLostNow is retireLost for a caller that holds no lock: Serve
// waiting for room calls it, since the slots a lost request holds are
// room only its retirement gives back.
func (p *puller) retireLostNow() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retireLost(time.Now())
}

// newLane subscribes a new lane. p.mu is held.
func (p *puller) newLane() (*lane, error) {
	nc := p.s.q.js.Conn()
	l := &lane{inbox: nc.NewInbox()}
	sub, err := nc.Subscribe(l.inbox, func(m *nats.Msg) { p.onMsg(l, m) })
	if err != nil {
		return nil, err
	}
	// A request bounds what it brings, to the pool's free slots: no
	// limit is needed here.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	l.sub = sub
	p.lanes = append(p.lanes, l)
	return l, nil
}

// retire gives back the slots of l's request, taken as lost, and drops
// l. p.mu is held.
func (p *puller) retire(l *lane) {
	p.end(l)
	l.retired = true
	_ = l.sub.Unsubscribe()
	for i, m := range p.lanes {
		if m == l {
			p.lanes = append(p.lanes[:i], p.lanes[i+1:]...)
			break
		}
	}
}

// ask sends a request for n jobs on l, reserving their slots in s.mine;
// if it can't be sent they are given back. Once stopped, it asks nothing.
func (p *puller) ask(l *lane, n int) error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.s.mu.Lock()
	p.s.mine += n
	p.s.mu.Unlock()
	l.out, l.left, l.expires = true, n, time.Now().Add(fetchWait+fetchGrace)
	p.mu.Unlock()
	req, _ := json.Marshal(struct {
		Batch   int           `json:"batch"`
		Expires time.Duration `json:"expires"`
	}{n, fetchWait})
	err := p.s.q.js.Conn().PublishRequest(p.subject, l.inbox, req)
	if err != nil {
		p.mu.Lock()
		p.end(l)
		p.mu.Unlock()
	}
	return err
}

// end ends l's request: the slots of the jobs it did not bring are
// given back. p.mu is held.
func (p *puller) end(l *lane) {
	if !l.out {
		return
	}
	p.s.release(l.left)
	l.out, l.left = false, 0
	select {
	case p.ended <- struct{}{}:
	default:
	}
}

// takeTrouble reports, once, whether the server was in trouble.
func (p *puller) takeTrouble() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.trouble
	p.trouble = false
	return t
}

// onMsg takes a job that came on l, or the server's word that l's
// request ended.
func (p *puller) onMsg(l *lane, m *nats.Msg) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.Subject == l.inbox {
		// A status (a job comes on its own subject): the request has
		// expired, or the server refused or dropped it.
		if !l.retired {
			p.end(l)
			p.trouble = p.trouble || m.Header.Get("Status") != "408"
		}
		return
	}
	if p.stopped || l.retired || !l.out {
		// Serve is stopping, or no slot waits for this job.
		_ = m.Nak()
		return
	}
	l.left--
	if l.left == 0 {
		p.end(l)
	}
	p.s.start(pulledMsg{m})
}

// stop ends the lanes: no job starts after it returns, and the slots of
// the requests out are given back. Idempotent.
func (p *puller) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, l := range p.lanes {
		p.end(l)
		_ = l.sub.Unsubscribe()
	}
	p.lanes = nil
}
