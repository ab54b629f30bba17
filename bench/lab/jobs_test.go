package main

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The durable-job rows run, beside the other reference rows: each job
// goes through Accept to a worker process and is answered 200 with its
// end, none fails, and the table shows the rows in the reference group.
func TestDurableJobRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rows, err := run(ctx, []string{"-quick", "-only", "durable jobs"}, &out, io.Discard)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Len(t, rows, 3)
	for _, r := range rows {
		assert.Empty(t, r.NA, r.Name)
		assert.Equal(t, "reference: 200 ms CPU jobs beside /fast", r.Group, r.Name)
		assert.Positive(t, r.Job.N, "%s: no job answered 200", r.Name)
		assert.Zero(t, r.Shed+r.Dropped+r.Errors, "%s: jobs shed or failed", r.Name)
		assert.Equal(t, r.Jobs, r.Job.N+r.Accepted, "%s: every job answered 200, or 202 past WaitFor", r.Name)
		assert.Contains(t, out.String(), r.Name)
	}
}
