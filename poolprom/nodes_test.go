package poolprom_test

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/promtest"
	"github.com/offloadgo/offload/internal/remotetest"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolprom"
)

// A Remote pool's worker nodes are reported from their adverts: their
// slots, the slots in use and this pool's tasks on each, as they change.
func TestCollectorNodes(t *testing.T) {
	const heartbeat = remotetest.Heartbeat
	p := remotetest.Pool(t, "prom", 5, remotetest.Node{Name: "a", Workers: 2}, remotetest.Node{Name: "b", Workers: 3})
	inproc, err := pool.New(pool.Options{Workers: 1})
	require.NoError(t, err)
	defer inproc.Close()

	c := poolprom.New(poolprom.Options{})
	require.NoError(t, c.Add("remote", p))
	require.NoError(t, c.Add("inproc", inproc))
	srv := serveMetrics(t, c)

	m := promtest.Scrape(t, srv.URL)
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
		for _, v := range byNode(t, promtest.Scrape(t, srv.URL), family) {
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

// byNode returns family's values by node name (remotetest.NodeName),
// checking that each series is the remote pool's.
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
		out[remotetest.NodeName(labels["node"])] = m.Gauge.GetValue()
	}
	return out
}
