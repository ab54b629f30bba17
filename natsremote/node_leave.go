package natsremote

import (
	"context"
	"time"
)

// DefaultDrain is ServeOptions.Drain's default: long enough for most
// calls to finish, and under the 30 s that Kubernetes (and systemd's
// 90 s) grant a process between SIGTERM and SIGKILL, so that a rolling
// deploy of nodes fails no call that ends within it.
const DefaultDrain = 25 * time.Second

// NoDrain, as ServeOptions.Drain, makes a node close its pool under its
// running calls as soon as it leaves: their callers get pool.ErrNodeLost.
// As OFFLOAD_NATS_DRAIN (EnvDrain) it is "none".
const NoDrain time.Duration = -1

// leave stops taking calls, says so, gives running calls their drain,
// closes the node's pool and waits until every call has answered. While
// it drains, the node's subject stays subscribed: it answers new calls
// "full", so that their submitters try other nodes, and pings, so that
// the submitters of the calls it runs don't take it for lost. drain is
// false when the connection closed: no answer could go out, so the calls
// end at once.
func (s *nodeServer) leave(drain bool) {
	running := s.stopTaking()
	s.advertise()
	wait := max(s.o.Drain, 0)
	if !drain {
		wait = 0
	}
	s.o.Logger.Info("natsremote: leaving", "pool", s.o.Pool, "node", s.id, "running", running, "drain", wait)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if s.local.Shutdown(ctx) != nil {
		// Closed under the calls left, which end now; wait for its
		// workers, and so for the calls' answers.
		if wait > 0 {
			s.o.Logger.Warn("natsremote: drain over, ending the calls left", "pool", s.o.Pool, "node", s.id, "drain", wait)
		}
		_ = s.local.Shutdown(context.Background())
	}
	s.running.Wait()
	s.o.Logger.Info("natsremote: left", "pool", s.o.Pool, "node", s.id)
}

// stopTaking makes the node answer every new call "full" and advertise no
// more but its leaving, and returns how many calls it runs.
func (s *nodeServer) stopTaking() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaving = true
	if s.soon != nil {
		s.soon.Stop()
	}
	return len(s.calls)
}
