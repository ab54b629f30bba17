package poolprom_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/internal/promtest"
	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/poolprom"
)

func TestMain(m *testing.M) {
	pool.Main()                                         // the test binary is the Subprocess pool's worker
	goleak.VerifyTestMain(m, testkit.IgnoreSourceSetup) // jobs' tests (internal/jobstest)
}

var (
	echo = pool.Register("poolprom.echo", func(_ context.Context, n int) (int, error) { return n, nil })
	fail = pool.Register("poolprom.fail", func(context.Context, int) (int, error) { return 0, errors.New("no") })
	hold = pool.Register("poolprom.hold", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	// holdAnnounced is hold that first says, from where it runs, that it
	// runs: in a worker process, its line reaches the pool's Logger.
	holdAnnounced = pool.Register("poolprom.hold-announced", func(ctx context.Context, _ int) (int, error) {
		fmt.Println("poolprom.hold-announced started")
		<-ctx.Done()
		return 0, ctx.Err()
	})
	exit3 = pool.Register("poolprom.exit3", func(context.Context, int) (int, error) {
		os.Exit(3)
		return 0, nil
	})
)

// collected is a pool of o, closed with the test, that a Collector
// reports as name, and a server of that Collector's metrics.
func collected(t *testing.T, name string, o pool.Options) (*pool.Pool, *httptest.Server) {
	t.Helper()
	p, err := pool.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	c := poolprom.New(poolprom.Options{})
	require.NoError(t, c.Add(name, p))
	return p, serveMetrics(t, c)
}

// serveMetrics serves c's metrics, gathered by a pedantic registry, until
// the test ends.
func serveMetrics(t *testing.T, c *poolprom.Collector) *httptest.Server {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return srv
}

// value returns the value of the series of family name with labels
// pool=p (and, for more, pairs of label, value).
func value(t *testing.T, families map[string]*dto.MetricFamily, name, p string, more ...string) float64 {
	t.Helper()
	f := families[name]
	require.NotNil(t, f, "no family %s", name)
	want := map[string]string{"pool": p}
	for i := 0; i+1 < len(more); i += 2 {
		want[more[i]] = more[i+1]
	}
next:
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no series %s%v", name, want)
	return 0
}

// Every metric moves as the pools work: scraped through promhttp, in
// process and in worker processes, counters, gauges, histograms and the
// breakdown by task.
func TestCollectorScrape(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inproc, err := pool.New(pool.Options{Workers: 1, MaxQueue: 1})
	require.NoError(t, err)
	defer inproc.Close()
	var workerLog testkit.Buffer
	sub, err := pool.New(pool.Options{Workers: 1, Isolation: pool.Subprocess,
		Subprocess: pool.SubprocessOptions{MaxTasksPerWorker: 2},
		Logger:     slog.New(slog.NewTextHandler(&workerLog, nil))})
	testkit.SkipUnsupported(t, err)
	require.NoError(t, err)
	defer sub.Close()

	c := poolprom.New(poolprom.Options{})
	require.NoError(t, c.Add("inproc", inproc))
	require.NoError(t, c.Add("sub", sub))
	require.Error(t, c.Add("sub", sub), "a name is taken once")
	srv := serveMetrics(t, c)

	m := promtest.Scrape(t, srv.URL)
	assert.Zero(t, value(t, m, "offload_submitted_total", "inproc"))
	assert.Zero(t, value(t, m, "offload_run_seconds", "inproc"))

	// In process: results, an error, a rejection, a cancel, a busy worker.
	for i := range 3 {
		_, err := pool.Run(ctx, inproc, echo, i)
		require.NoError(t, err)
	}
	_, err = pool.Run(ctx, inproc, fail, 0)
	require.Error(t, err)
	holdCtx, release := context.WithCancel(ctx)
	held, err := pool.Submit(holdCtx, inproc, hold, 0)
	require.NoError(t, err)
	queued, err := pool.Submit(ctx, inproc, echo, 7)
	require.NoError(t, err)
	_, err = pool.Submit(ctx, inproc, echo, 8)
	require.ErrorIs(t, err, pool.ErrQueueFull)
	require.Eventually(t, func() bool { return inproc.Stats().Busy == 1 }, 5*time.Second, time.Millisecond)
	m = promtest.Scrape(t, srv.URL)
	assert.Equal(t, 1.0, value(t, m, "offload_busy_workers", "inproc"))
	assert.Equal(t, 1.0, value(t, m, "offload_queued_tasks", "inproc"))
	assert.Equal(t, 1.0, value(t, m, "offload_workers", "inproc"))
	assert.Equal(t, 1.0, value(t, m, "offload_rejected_total", "inproc"))
	release()
	_, err = held.Wait()
	require.ErrorIs(t, err, context.Canceled)
	_, err = queued.Wait()
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inproc.Stats().Tasks["poolprom.hold"].Canceled == 1 }, 5*time.Second, time.Millisecond)

	m = promtest.Scrape(t, srv.URL)
	st := inproc.Stats()
	assert.Equal(t, 6.0, value(t, m, "offload_submitted_total", "inproc"))
	assert.Equal(t, float64(st.Completed), value(t, m, "offload_completed_total", "inproc"))
	assert.Equal(t, 4.0, value(t, m, "offload_completed_total", "inproc"))
	assert.Equal(t, 1.0, value(t, m, "offload_failed_total", "inproc"))
	assert.Equal(t, 1.0, value(t, m, "offload_canceled_total", "inproc"))
	assert.Equal(t, 0.0, value(t, m, "offload_busy_workers", "inproc"))
	assert.Equal(t, 6.0, value(t, m, "offload_run_seconds", "inproc"), "every run is in the histogram")
	assert.Equal(t, 6.0, value(t, m, "offload_queue_wait_seconds", "inproc"))
	assert.Greater(t, value(t, m, "offload_utilization", "inproc"), 0.0)
	assert.Equal(t, 4.0, value(t, m, "offload_task_runs_total", "inproc", "task", "poolprom.echo", "outcome", "completed"))
	assert.Equal(t, 1.0, value(t, m, "offload_task_runs_total", "inproc", "task", "poolprom.fail", "outcome", "failed"))
	assert.Equal(t, 1.0, value(t, m, "offload_task_runs_total", "inproc", "task", "poolprom.hold", "outcome", "canceled"))
	assert.Greater(t, value(t, m, "offload_task_run_seconds_total", "inproc", "task", "poolprom.hold"), 0.0)

	// Worker processes: a crash, a recycle, a termination.
	_, err = pool.Run(ctx, sub, exit3, 0)
	require.ErrorIs(t, err, pool.ErrWorkerCrashed)
	for i := range 3 { // the third on the recycled process's successor, which is then up
		_, err := pool.Run(ctx, sub, echo, i)
		require.NoError(t, err)
	}
	holdCtx, release = context.WithCancel(ctx)
	held, err = pool.Submit(holdCtx, sub, holdAnnounced, 0)
	require.NoError(t, err)
	// Only a call that reached its process is terminated.
	require.Eventually(t, func() bool { return strings.Contains(workerLog.String(), "hold-announced started") },
		20*time.Second, time.Millisecond, "the worker's line reaches the Logger")
	release()
	_, err = held.Wait()
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool {
		m = promtest.Scrape(t, srv.URL)
		return value(t, m, "offload_crashed_total", "sub") == 1 &&
			value(t, m, "offload_recycled_total", "sub") == 1 &&
			value(t, m, "offload_terminated_total", "sub") == 1
	}, 10*time.Second, 5*time.Millisecond, "crashed, recycled and terminated reach the scrape: %+v", sub.Stats())
	assert.Equal(t, 5.0, value(t, m, "offload_submitted_total", "sub"))
	assert.Zero(t, value(t, m, "offload_canceled_on_node_total", "sub"), "a process killed here is no task canceled on a node")

	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems, "the metrics follow Prometheus' naming rules")
}

// A scraper that negotiates the protobuf format gets native histograms
// too, whose counts add up to the classic ones.
func TestCollectorNativeHistograms(t *testing.T) {
	p, err := pool.New(pool.Options{Workers: 1})
	require.NoError(t, err)
	defer p.Close()
	for i := range 50 {
		_, err := pool.Run(context.Background(), p, echo, i)
		require.NoError(t, err)
	}
	c := poolprom.New(poolprom.Options{Namespace: "test"})
	require.NoError(t, c.Add("p", p))
	h := gatheredHistogram(t, c, "test_run_seconds")
	require.NotNil(t, h)
	assert.EqualValues(t, 3, h.GetSchema())
	assert.NotEmpty(t, h.PositiveSpan)
	assert.EqualValues(t, h.GetSampleCount(), nativeCount(h), "native buckets hold every sample")
	last := h.Bucket[len(h.Bucket)-1]
	assert.LessOrEqual(t, last.GetCumulativeCount(), h.GetSampleCount())
	assert.EqualValues(t, 50, h.GetSampleCount())
}

// Shed's 503s and a stuck task reach the scrape: offload_shed_total by
// reason, and offload_oldest_running_seconds while a task holds its worker.
func TestCollectorShedAndOldestRunning(t *testing.T) {
	p, srv := collected(t, "shed", pool.Options{Workers: 1, MaxQueue: pool.NoQueue})

	holdCtx, release := context.WithCancel(context.Background())
	held, err := pool.Submit(holdCtx, p, hold, 0)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Stats().Busy == 1 }, 5*time.Second, time.Millisecond)
	handler := pool.Shed(p, pool.ShedOptions{})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 3 {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	}
	require.Eventually(t, func() bool { return p.Stats().OldestRunning > 0 }, 5*time.Second, time.Millisecond)
	m := promtest.Scrape(t, srv.URL)
	assert.Equal(t, 3.0, value(t, m, "offload_shed_total", "shed", "reason", "queue_full"))
	for _, reason := range []string{"closed", "max_wait", "deadline", "no_node", "lag"} {
		assert.Zero(t, value(t, m, "offload_shed_total", "shed", "reason", reason), reason)
	}
	assert.Positive(t, value(t, m, "offload_oldest_running_seconds", "shed"), "the held task's age")

	release()
	_, err = held.Wait()
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool {
		return value(t, promtest.Scrape(t, srv.URL), "offload_oldest_running_seconds", "shed") == 0
	},
		5*time.Second, time.Millisecond, "nothing runs")
}

// A task past SlowTaskAfter and the pool's current limit reach the
// scrape: offload_slow_tasks_total, and offload_workers_max as SetWorkers
// sets it.
func TestCollectorSlowTasksAndWorkersMax(t *testing.T) {
	p, srv := collected(t, "slow", pool.Options{Workers: 2, SlowTaskAfter: time.Millisecond})

	m := promtest.Scrape(t, srv.URL)
	assert.Zero(t, value(t, m, "offload_slow_tasks_total", "slow"))
	assert.Equal(t, 2.0, value(t, m, "offload_workers_max", "slow"))

	holdCtx, release := context.WithCancel(context.Background())
	held, err := pool.Submit(holdCtx, p, hold, 0)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Stats().Slow == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, p.SetWorkers(5))
	m = promtest.Scrape(t, srv.URL)
	assert.Equal(t, 1.0, value(t, m, "offload_slow_tasks_total", "slow"))
	assert.Equal(t, 5.0, value(t, m, "offload_workers_max", "slow"))
	release()
	_, err = held.Wait()
	require.ErrorIs(t, err, context.Canceled)
}
