package poolprom_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolprom"
)

// A Remote pool's worker nodes are reported from their adverts: their
// slots, the slots in use and this pool's tasks on each, as they change.
func TestCollectorNodes(t *testing.T) {
	const heartbeat = 20 * time.Millisecond
	quiet := slog.New(slog.DiscardHandler)
	s, err := embedded.Start(embedded.Options{})
	require.NoError(t, err)
	defer s.Shutdown()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 2)
	for _, n := range []struct {
		name    string
		workers int
	}{{"a", 2}, {"b", 3}} {
		nc, err := s.Connect()
		require.NoError(t, err)
		defer nc.Close()
		go func() {
			served <- natsremote.Serve(ctx, nc, natsremote.ServeOptions{
				Pool: "prom", Name: n.name, Heartbeat: heartbeat, Local: pool.Options{Workers: n.workers}, Logger: quiet})
		}()
	}
	defer func() { stop(); <-served; <-served }()
	nc, err := s.Connect()
	require.NoError(t, err)
	defer nc.Close()
	tr, err := natsremote.New(nc, natsremote.Options{Pool: "prom", Heartbeat: heartbeat})
	require.NoError(t, err)
	p, err := pool.New(pool.Options{Workers: 5, Isolation: pool.Remote, Transport: tr, Logger: quiet})
	require.NoError(t, err)
	defer p.Close()
	inproc, err := pool.New(pool.Options{Workers: 1})
	require.NoError(t, err)
	defer inproc.Close()

	c := poolprom.New(poolprom.Options{})
	require.NoError(t, c.Add("remote", p))
	require.NoError(t, c.Add("inproc", inproc))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	require.Eventually(t, func() bool { return len(p.Nodes()) == 2 }, 10*time.Second, heartbeat)
	m := scrape(t, srv)
	assert.Equal(t, map[string]float64{"a": 2, "b": 3}, byNode(t, m, "offload_node_workers"),
		"the remote pool's nodes, and none for the in-process pool")
	for node, age := range byNode(t, m, "offload_node_advert_age_seconds") {
		assert.Less(t, age, 5.0, node)
	}

	// A task held on a node shows there, in this pool's count at once and
	// in the node's advert within a heartbeat; it leaves both when it ends.
	runCtx, cancelRun := context.WithCancel(context.Background())
	f, err := pool.Submit(runCtx, p, hold, 0)
	require.NoError(t, err)
	sum := func(family string) (n float64) {
		for _, v := range byNode(t, scrape(t, srv), family) {
			n += v
		}
		return n
	}
	require.Eventually(t, func() bool { return sum("offload_node_inflight_tasks") == 1 && sum("offload_node_busy_workers") == 1 },
		10*time.Second, heartbeat)
	cancelRun()
	_, err = f.Wait()
	require.Error(t, err)
	require.Eventually(t, func() bool { return sum("offload_node_inflight_tasks") == 0 && sum("offload_node_busy_workers") == 0 },
		10*time.Second, heartbeat)
}

// byNode returns family's values by node name (a node's ID is its name, a
// dash and a random suffix), checking that each series is the remote
// pool's.
func byNode(t *testing.T, families map[string]*dto.MetricFamily, family string) map[string]float64 {
	t.Helper()
	f := families[family]
	require.NotNil(t, f, "no family %s", family)
	out := map[string]float64{}
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		require.Equal(t, "remote", labels["pool"])
		name, _, _ := strings.Cut(labels["node"], "-")
		out[name] = m.Gauge.GetValue()
	}
	return out
}
