package natsremote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/pool"
)

// Serve makes this process a worker node of the Remote pools named
// o.Pool, on nc's NATS system: it runs their calls through a pool of its
// own, made from o.Local, and advertises its free slots every
// o.Heartbeat. It blocks until ctx ends or nc closes, then leaves: it
// advertises that it does, answers new calls "full" (their submitters try
// other nodes), gives running calls o.Drain to finish and closes its pool
// under the rest, whose callers get pool.ErrNodeLost. It returns once
// every call has ended — an InProcess task that ignores its ctx holds it
// until the task returns — with nil when ctx ended, or why it could not
// serve (invalid options, a closed connection). nc stays the caller's.
//
// Every task registered in the binary (pool.Register at package level) is
// served; a call for a task the node lacks, or whose In or Out type
// differs from the submitter's (another build), is refused and never
// runs. Any number of nodes may serve one pool; each needs a unique ID
// (see ServeOptions.Name). Serve may run more than once at a time, on one
// connection or several: each is a node of its own.
func Serve(ctx context.Context, nc *nats.Conn, o ServeOptions) error {
	if nc == nil {
		return errors.New("natsremote: Serve with a nil *nats.Conn")
	}
	if err := o.settle(); err != nil {
		return err
	}
	local, err := pool.New(o.Local)
	if err != nil {
		return fmt.Errorf("natsremote: the node's pool: %w", err)
	}
	s := &server{
		nc:    nc,
		o:     o,
		id:    nodeID(o.Name),
		local: local,
		calls: map[callKey]*serverCall{},
	}
	return s.serve(ctx)
}

// server is a worker node: its subscriptions, its pool, and the calls it
// runs (see node.go).
type server struct {
	nc    *nats.Conn
	o     ServeOptions
	id    string
	local *pool.Pool

	mu    sync.Mutex
	calls map[callKey]*serverCall
	// leaving: the node answers every new call "full".
	leaving bool
	// turnedAway: a call was answered "full" since the last advert; a
	// freed slot is advertised at once then, for submitters waiting.
	turnedAway bool
	running    sync.WaitGroup // the calls' goroutines
}

func (s *server) serve(ctx context.Context) error {
	calls, err := s.nc.Subscribe(nodeSubject(s.o.Pool, s.id), s.onMessage)
	if err != nil {
		s.local.Close()
		return fmt.Errorf("natsremote: subscribe: %w", err)
	}
	discover, err := s.nc.Subscribe(discoverSubject(s.o.Pool), func(*nats.Msg) { s.advertise() })
	if err == nil {
		err = s.nc.FlushTimeout(bindTimeout)
	}
	if err == nil {
		s.o.Logger.Info("natsremote: serving", "pool", s.o.Pool, "node", s.id, "workers", s.local.Options().Workers)
		err = s.advertiseUntil(ctx)
	}
	if discover != nil {
		_ = discover.Unsubscribe()
	}
	s.leave()
	_ = calls.Unsubscribe()
	_ = s.nc.FlushTimeout(time.Second) // the last answers
	if err != nil {
		return fmt.Errorf("natsremote: node %s: %w", s.id, err)
	}
	return nil
}

// advertiseUntil advertises every heartbeat until ctx ends (nil) or the
// connection closes (errConnClosed).
func (s *server) advertiseUntil(ctx context.Context) error {
	t := time.NewTicker(s.o.Heartbeat)
	defer t.Stop()
	for {
		if s.nc.IsClosed() {
			return errConnClosed
		}
		s.advertise()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
	}
}

// leave stops taking calls, says so, gives running calls their drain,
// closes the node's pool and waits until every call has answered.
func (s *server) leave() {
	s.mu.Lock()
	s.leaving = true
	s.mu.Unlock()
	s.advertise()
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Drain)
	defer cancel()
	if s.local.Shutdown(ctx) != nil {
		// Closed under the calls left, which end now; wait for its
		// workers, and so for the calls' answers.
		_ = s.local.Shutdown(context.Background())
	}
	s.running.Wait()
	s.o.Logger.Info("natsremote: left", "pool", s.o.Pool, "node", s.id)
}

// advertise publishes the node's advert.
func (s *server) advertise() {
	s.mu.Lock()
	leaving := s.leaving
	s.turnedAway = false
	s.mu.Unlock()
	l := s.local.Load()
	a := advert{id: s.id, workers: l.Capacity, busy: l.Busy, free: s.free(), heartbeat: s.o.Heartbeat, leaving: leaving}
	if leaving {
		a.free = 0
	}
	_ = s.nc.Publish(advertSubject(s.o.Pool), appendAdvert(nil, a))
}

// free is how many calls the node would take now.
func (s *server) free() int {
	l := s.local.Load()
	if l.Closed {
		return 0
	}
	return max(l.Capacity-l.InFlight, 0)
}

// nodeID makes a node's ID from name (or the host's name): a subject
// token, with a random suffix.
func nodeID(name string) string {
	if name == "" {
		name, _ = os.Hostname()
	}
	name = strings.Map(func(r rune) rune {
		if r <= ' ' || r == '.' || r == '*' || r == '>' || r > '~' {
			return '_'
		}
		return r
	}, name)
	if len(name) > 100 {
		name = name[:100]
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	if name == "" {
		return hex.EncodeToString(suffix[:])
	}
	return name + "-" + hex.EncodeToString(suffix[:])
}
