package embedded

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is NATS servers in this process, routed to each other over
// loopback: one NATS system with several servers to connect to, for
// tests of what a Remote pool does when its server goes away. Make it
// with StartCluster; end it with Shutdown.
type Cluster struct {
	Servers []*Server
}

// StartCluster starts n servers, each listening for clients on 127.0.0.1
// (Options.Listen is implied, Options.Port ignored: the kernel picks) and
// routed to the others over 127.0.0.1, and returns once every one routes
// to every other (at most 10 s).
func StartCluster(n int, o Options) (*Cluster, error) {
	if n < 2 {
		return nil, fmt.Errorf("embedded: a cluster of %d servers, want at least 2", n)
	}
	if o.StoreDir != "" {
		return nil, errors.New("embedded: a Cluster does not run JetStream (Options.StoreDir)")
	}
	o.Listen, o.Port = true, 0
	c := &Cluster{}
	var seed *url.URL
	for i := range n {
		s, err := start(o, func(opts *server.Options) {
			opts.ServerName = fmt.Sprintf("offload-embedded-%d", i)
			opts.Cluster = server.ClusterOpts{Name: "offload-embedded", Host: "127.0.0.1", Port: server.RANDOM_PORT}
			if seed != nil {
				opts.Routes = []*url.URL{seed}
			}
		})
		if err != nil {
			c.Shutdown()
			return nil, err
		}
		c.Servers = append(c.Servers, s)
		if seed == nil {
			seed = &url.URL{Scheme: "nats", Host: s.current().ClusterAddr().String()}
		}
	}
	for end := time.Now().Add(startTimeout); ; time.Sleep(10 * time.Millisecond) {
		routed := true
		for _, s := range c.Servers {
			routed = routed && s.current().NumRemotes() >= n-1
		}
		if routed {
			return c, nil
		}
		if time.Now().After(end) {
			c.Shutdown()
			return nil, errors.New("embedded: the cluster's routes did not form within 10 s")
		}
	}
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
