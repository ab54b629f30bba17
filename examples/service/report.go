package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

// reportsQueue names the queue of reports, in the API and in the workers.
const reportsQueue = "reports"

// reportWait is how long POST /reports waits for its report before it
// answers 202 instead.
const reportWait = time.Second

// ReportIn is a report's request: how many rows it covers. A report of a
// few thousand rows is ready in a millisecond; one of tens of millions
// takes seconds.
type ReportIn struct {
	Rows int `json:"rows"`
}

// Report is a finished report: its rows, and their digest.
type Report struct {
	Rows   int    `json:"rows"`
	Digest string `json:"digest"`
}

// ExportReport is the service's work of seconds: it runs as a durable job
// (natsjobs) in a worker service (-role worker), not in the request that
// asked for it. Registered at package level, as Hash is, for the worker
// service's worker processes, which are this same binary.
var ExportReport = pool.Register("report", func(ctx context.Context, in ReportIn) (Report, error) {
	sum := sha256.Sum256([]byte("report"))
	for i := 1; i < in.Rows; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return Report{}, ctx.Err() // cancelled (q.Cancel), or past the job's Timeout
		}
		sum = sha256.Sum256(sum[:])
	}
	return Report{Rows: in.Rows, Digest: hex.EncodeToString(sum[:])}, nil
})

// reportsHandler serves POST /reports with a body of {"rows": N}: it
// makes the request a durable job of ExportReport on q and answers 200
// with the report if the job ends within waitFor; else 202 with
// Location: /jobs/{id}, where StatusHandler serves the job's status and,
// once it succeeded, the report. A full queue is 503 with Retry-After, a
// bad body 400; a job that failed for good (dead) is 500.
func reportsHandler(q *natsjobs.Queue, waitFor time.Duration) http.Handler {
	return natsjobs.Accept(q, ExportReport, decodeReport, natsjobs.AcceptOptions{
		WaitFor: waitFor,
		Enqueue: []natsjobs.EnqueueOption{natsjobs.Timeout(10 * time.Minute)}, // each attempt's deadline
	})
}

// decodeReport reads a report's request from r's body.
func decodeReport(r *http.Request) (ReportIn, error) {
	var in ReportIn
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&in); err != nil {
		return in, fmt.Errorf(`want a body of {"rows": N}: %w`, err)
	}
	if in.Rows < 1 || in.Rows > maxRounds {
		return in, fmt.Errorf("rows: want 1 to %d", maxRounds)
	}
	return in, nil
}
