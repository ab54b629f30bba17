package poolotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/offloadgo/offload/internal/remotetest"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolotel"
)

var hold = pool.Register("poolotel.hold", func(ctx context.Context, _ int) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
})

// A Remote pool's worker nodes are reported from their adverts: their
// slots, the slots in use and this pool's tasks on each, as they change.
func TestRegisterNodes(t *testing.T) {
	const heartbeat = remotetest.Heartbeat
	p := remotetest.Pool(t, "otel", 5, remotetest.Node{Name: "a", Workers: 2}, remotetest.Node{Name: "b", Workers: 3})

	meter, reader := newMeter(t)
	reg, err := poolotel.Register(meter, "remote", p)
	require.NoError(t, err)
	defer reg.Unregister()

	m := collect(t, reader)
	assert.Equal(t, map[string]float64{"a": 2, "b": 3}, byNode(t, m["offload.pool.node.workers"]))
	for node, age := range byNode(t, m["offload.pool.node.advert.age"]) {
		assert.Less(t, age, 5.0, node)
	}

	runCtx, cancelRun := context.WithCancel(context.Background())
	f, err := pool.Submit(runCtx, p, hold, 0)
	require.NoError(t, err)
	sum := func(name string) (n float64) {
		for _, v := range byNode(t, collect(t, reader)[name]) {
			n += v
		}
		return n
	}
	require.Eventually(t, func() bool {
		return sum("offload.pool.node.inflight") == 1 && sum("offload.pool.node.workers.busy") == 1
	},
		10*time.Second, heartbeat)
	cancelRun()
	_, err = f.Wait()
	require.Error(t, err)
	require.Eventually(t, func() bool {
		return sum("offload.pool.node.inflight") == 0 && sum("offload.pool.node.workers.busy") == 0
	},
		10*time.Second, heartbeat)
}

// byNode returns a node gauge's values by node name (remotetest.NodeName),
// checking each point is the pool's.
func byNode(t *testing.T, m metricdata.Metrics) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	add := func(attrs attribute.Set, v float64) {
		p, _ := attrs.Value("pool")
		require.Equal(t, "remote", p.AsString(), m.Name)
		id, _ := attrs.Value("node")
		out[remotetest.NodeName(id.AsString())] = v
	}
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, float64(p.Value))
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, p.Value)
		}
	default:
		t.Fatalf("%q is not a node gauge (%T)", m.Name, m.Data)
	}
	return out
}
