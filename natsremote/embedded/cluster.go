package embedded

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is NATS servers in this process, routed to each other over
// loopback: one NATS system with several servers to connect to, for
// tests of what a Remote pool, or a replicated JetStream, does when a
// server goes away. Make it with StartCluster; end it with Shutdown.
type Cluster struct {
	Servers []*Server
}

// StartCluster starts n servers, each listening for clients on 127.0.0.1
// (Options.Listen is implied, Options.Port ignored: the kernel picks) and
// routed to the others over 127.0.0.1, and returns once every one routes
// to every other (at most 10 s).
//
// With Options.StoreDir the servers run clustered JetStream, each
// keeping its streams in a directory of its own in StoreDir (named as
// the server is), and StartCluster returns once they have elected their
// meta leader: streams with Replicas up to n can be made at once.
func StartCluster(n int, o Options) (*Cluster, error) {
	if n < 2 {
		return nil, fmt.Errorf("embedded: a cluster of %d servers, want at least 2", n)
	}
	dir := o.StoreDir
	o.Listen, o.Port = true, 0
	// Every server routes to every other by a port picked here, so that
	// each has routes configured from its start (clustered JetStream
	// requires it), and a restarted one is routed to again.
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	routes := make([]*url.URL, n)
	for i, port := range ports {
		routes[i] = &url.URL{Scheme: "nats", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	}
	c := &Cluster{}
	for i := range n {
		s, err := start(o, func(opts *server.Options) {
			opts.ServerName = fmt.Sprintf("offload-embedded-%d", i)
			if dir != "" {
				opts.StoreDir = filepath.Join(dir, opts.ServerName)
			}
			opts.Cluster = server.ClusterOpts{Name: "offload-embedded", Host: "127.0.0.1", Port: ports[i]}
			opts.Routes = append(slices.Clone(routes[:i]), routes[i+1:]...)
		})
		if err != nil {
			c.Shutdown()
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	if err := c.waitUntil(c.routed, "the cluster's routes did not form"); err != nil {
		c.Shutdown()
		return nil, err
	}
	if dir != "" {
		if err := c.waitUntil(c.jetStreamReady, "JetStream elected no meta leader"); err != nil {
			c.Shutdown()
			return nil, err
		}
	}
	return c, nil
}

// routed reports whether every running server routes to every other
// running one.
func (c *Cluster) routed() bool {
	running := c.running()
	for _, s := range running {
		if s.NumRemotes() < len(running)-1 {
			return false
		}
	}
	return true
}

// running is the servers that run now.
func (c *Cluster) running() []*server.Server {
	var running []*server.Server
	for _, s := range c.Servers {
		if ns := s.current(); ns.Running() {
			running = append(running, ns)
		}
	}
	return running
}

// waitUntil waits for ready, at most startTimeout; then it fails saying
// what did not happen.
func (c *Cluster) waitUntil(ready func() bool, what string) error {
	for end := time.Now().Add(startTimeout); !ready(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			return fmt.Errorf("embedded: %s within %v", what, startTimeout)
		}
	}
	return nil
}

// URLs lists the servers' client URLs, comma-separated, as nats.Connect
// takes them.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = s.ClientURL()
	}
	return strings.Join(urls, ",")
}

// Shutdown stops every server.
func (c *Cluster) Shutdown() {
	for _, s := range c.Servers {
		s.Shutdown()
	}
}

// freePorts returns n ports of 127.0.0.1 that the kernel picked as free.
// They are free again when it returns: a server listens on each soon
// after, and another process could take one meanwhile (the kernel does
// not hand out a port it just handed out).
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("embedded: pick a route port: %w", err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
