package natsjobs

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/offloadgo/offload/pool"
)

// Serve runs q's jobs through pool p until ctx ends, then drains (see
// ServeOptions.Drain) and returns nil. If p closes it stops too, and
// returns pool.ErrClosed; if q does, ErrQueueClosed. It takes only as
// many jobs as p has free slots, so that no job waits in a local buffer
// while its lease runs. Any number of Serves, in any processes, may
// share a queue; each job runs on one of them at a time (see the package
// doc for when it runs again). If q's user may not hear Cancels or take
// jobs (see WorkerPermissions), Serve returns at once with an error
// matching nats.ErrPermissionViolation that says which.
func Serve(ctx context.Context, q *Queue, p *pool.Pool, o ServeOptions) error {
	s := &server{q: q, p: p, log: cmp.Or(o.Logger, q.logger()), room: make(chan struct{}, 1),
		running: map[*attempt]struct{}{}, byID: map[ID]*attempt{}, rights: newServeRights(q)}
	cancels, err := q.js.Conn().Subscribe(q.cancelSubject(), s.onCancel)
	if err != nil {
		return fmt.Errorf("natsjobs: serve queue %q: %w", q.o.Name, err)
	}
	defer func() { _ = cancels.Unsubscribe() }()
	if err := s.rights.allowed(ctx, "subscribe to", q.cancelSubject()); err != nil {
		return err
	}
	pulling, stop := context.WithCancel(ctx)
	defer context.AfterFunc(q.life, stop)()
	err = s.pull(pulling) // no job starts after it returns
	stop()
	s.drain(o.Drain)
	return err
}

// server is one Serve: the jobs it runs now.
type server struct {
	q      *Queue
	p      *pool.Pool
	log    *slog.Logger
	rights *serveRights

	mu      sync.Mutex
	mine    int // jobs taken and not yet out of p (their slot not freed)
	running map[*attempt]struct{}
	byID    map[ID]*attempt // the running jobs whose id is read, for Cancel
	wg      sync.WaitGroup  // the running jobs
	room    chan struct{}   // a token when one of mine frees its slot
}

// Pauses of the pull loop: fetchWait bounds one pull request; busyWait is
// how often a full pool is looked at again when its slots are others';
// troubleWait follows a failed fetch (the server restarting, say).
const (
	fetchWait   = 5 * time.Second
	busyWait    = 20 * time.Millisecond
	troubleWait = 100 * time.Millisecond
)

// pull takes jobs while ctx lasts, asking for as many as p has free
// slots (see puller).
func (s *server) pull(ctx context.Context) error {
	pl := newPuller(s)
	defer pl.stop()
	// Jobs that come once ctx ends go straight back, not after the lease.
	defer context.AfterFunc(ctx, pl.stop)()
	for {
		l, err := pl.idleLane(ctx)
		if err != nil || pl.takeTrouble() {
			sleep(ctx, troubleWait) // the server is away: don't ask again at once
		}
		n, err := s.waitForRoom(ctx, pl.retireLostNow)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			if s.q.life.Err() != nil {
				return ErrQueueClosed
			}
			return nil
		}
		if l == nil {
			continue // no lane: try again
		}
		if err := pl.ask(l, n); err != nil {
			sleep(ctx, troubleWait)
			continue
		}
		if err := s.rights.firstFetch(ctx); err != nil {
			return err
		}
	}
}

// waitForRoom returns how many jobs p has room for now, waiting until it
// has room for one. It calls retireLost as it looks: a pull request lost
// unanswered holds slots that only its retirement gives back.
func (s *server) waitForRoom(ctx context.Context, retireLost func()) (int, error) {
	for {
		retireLost()
		l := s.p.Load()
		if l.Closed {
			return 0, pool.ErrClosed
		}
		if s.q.life.Err() != nil {
			return 0, ErrQueueClosed
		}
		s.mu.Lock()
		free := min(l.MaxWorkers-s.mine, l.MaxWorkers-l.InFlight)
		s.mu.Unlock()
		if free > 0 {
			return free, nil
		}
		t := time.NewTimer(busyWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, nil
		case <-s.room:
		case <-t.C:
		}
		t.Stop()
	}
}

// release gives back n slots taken with s.mine.
func (s *server) release(n int) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	s.mine -= n
	s.mu.Unlock()
	select {
	case s.room <- struct{}{}:
	default:
	}
}

// start runs one job in a goroutine of its own, its slot taken.
func (s *server) start(m jetstream.Msg) {
	a := newAttempt(s, m)
	s.mu.Lock()
	s.running[a] = struct{}{}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.running, a)
			s.mu.Unlock()
		}()
		a.run()
	}()
}

// drain lets the running jobs go on for d, then hands back those still
// running, and waits for every one to end.
func (s *server) drain(d time.Duration) {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	s.mu.Lock()
	for a := range s.running {
		a.handBack()
	}
	s.mu.Unlock()
	<-done
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// watchFor makes a Cancel of a's job end its run, from now until
// unwatch. It is called once a's id is known and before its claim, so
// that a Cancel either comes before the claim (which then finds the job
// Canceled) or reaches a here.
func (s *server) watchFor(a *attempt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[a.id] = a
}

func (s *server) unwatch(a *attempt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[a.id] == a {
		delete(s.byID, a.id)
	}
}

// onCancel hears that Cancel marked a job Canceled: if it runs here, its
// run ends.
func (s *server) onCancel(m *nats.Msg) {
	s.mu.Lock()
	a := s.byID[ID(m.Data)]
	s.mu.Unlock()
	if a != nil {
		a.end(ErrCanceled)
	}
}
