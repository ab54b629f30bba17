package poolprom_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/jobstest"
	"github.com/offloadgo/offload/internal/promtest"
	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/poolprom"
)

// A queue of durable jobs, scraped through promhttp: its depth and
// oldest job's age from the server, then the counts by task and run
// times of a job that succeeded, one retried then dead, one canceled.
func TestCollectorJobs(t *testing.T) {
	q := jobstest.Open(t, natsjobs.Options{})
	c := poolprom.New(poolprom.Options{})
	require.NoError(t, c.AddJobs("reports", q))
	require.Error(t, c.AddJobs("reports", q), "a name taken")
	srv := serveMetrics(t, c)

	q.EnqueueThree(t)
	families := promtest.Scrape(t, srv.URL)
	queue := func(name string, more ...string) float64 {
		return value(t, families, "offload_"+name, "", append([]string{"queue", "reports"}, more...)...)
	}
	assert.Equal(t, 2.0, queue("jobs_depth"), "the canceled job left the stream")
	assert.Positive(t, queue("jobs_oldest_seconds"))
	assert.Equal(t, 1.0, queue("jobs_enqueued_total", "task", "jobstest.hold"))
	assert.Equal(t, 1.0, queue("jobs_canceled_total", "task", "jobstest.hold"))

	q.RunThree(t)
	families = promtest.Scrape(t, srv.URL)
	for _, want := range []struct {
		task                                                        string
		enqueued, started, succeeded, retried, dead, canceled, runs float64
	}{
		{"jobstest.echo", 1, 1, 1, 0, 0, 0, 1},
		{"jobstest.fail", 1, 2, 0, 1, 1, 0, 2},
		{"jobstest.hold", 1, 0, 0, 0, 0, 1, 0},
	} {
		task := []string{"task", want.task}
		assert.Equal(t, want.enqueued, queue("jobs_enqueued_total", task...), want.task)
		assert.Equal(t, want.started, queue("jobs_started_total", task...), want.task)
		assert.Equal(t, want.succeeded, queue("jobs_succeeded_total", task...), want.task)
		assert.Equal(t, want.retried, queue("jobs_retried_total", task...), want.task)
		assert.Equal(t, want.dead, queue("jobs_dead_total", task...), want.task)
		assert.Equal(t, want.canceled, queue("jobs_canceled_total", task...), want.task)
		assert.Equal(t, want.runs, queue("job_run_seconds", task...), want.task)
	}

	c.RemoveJobs("reports")
	assert.NotContains(t, promtest.Scrape(t, srv.URL), "offload_jobs_depth")
}
