package embedded

import "fmt"

// jetStreamReady reports whether the running servers have a JetStream
// meta leader, each is current with it, and the leader counts each as an
// online peer. (Until the leader has a peer's first statistics it places
// no replica there: a stream of n replicas made before then fails with
// "no suitable peers for placement, peer offline".)
func (c *Cluster) jetStreamReady() bool {
	running := c.running()
	online := -1
	for _, s := range running {
		if !s.JetStreamIsCurrent() {
			return false
		}
		if s.JetStreamIsLeader() {
			online = len(s.JetStreamClusterPeers())
		}
	}
	return online >= len(running)
}

// Restart stops server i of the cluster if it runs (a server stopped by
// its Shutdown starts again) and starts it on its ports and its store
// directory (see Server.Restart). It returns once the server routes to
// the other running servers and, with JetStream, the cluster has a meta
// leader that every running server is current with (at most 10 s each).
// The streams' own replicas catch up after: a stream's info tells when.
func (c *Cluster) Restart(i int) error {
	if i < 0 || i >= len(c.Servers) {
		return fmt.Errorf("embedded: no server %d in a cluster of %d", i, len(c.Servers))
	}
	s := c.Servers[i]
	if err := s.Restart(); err != nil {
		return err
	}
	if err := c.waitUntil(c.routed, fmt.Sprintf("server %d did not route to the others again", i)); err != nil {
		return err
	}
	if s.o.StoreDir == "" {
		return nil
	}
	return c.waitUntil(c.jetStreamReady, "JetStream elected no meta leader")
}
