// Command lab replays the reference page's experiment on offload and
// extends it to overload: a server in its own process with /fast and
// /job?mode=inline|chunkN[after|sleep]|poolN|procN|remoteN|jobs, an open-loop Poisson
// load generator (latency from each request's intended send time, so a
// stalled server can't hide behind a stalled client), and one table row per
// scenario: /fast p50/p99/max, job p50/p99/max, 503s, goodput. Reference
// rows run three times; their /fast p99 is the median run's. A last table
// splits the time of Shed's 503s between client and server, and the last
// lines hold the run against the reference page's bars. The saturated rows
// run the jobs inline in the handlers at twice what the cores can do,
// without Shed, with Shed's MaxLag and with pool.ShedCPU, and ask a
// readiness probe (/readyz, pool.Ready, which reads ShedCPU's slots where
// they are in front) ten times a second: a table of its own.
//
// The durable-job rows, among the reference rows, run the jobs as natsjobs
// jobs (mode jobs): natsjobs.Accept in the server takes them, on a
// JetStream embedded there, and natsjobs.Serve runs them in worker
// processes of their own.
//
//	go run ./bench/lab              # the full table, about six minutes
//	go run ./bench/lab -quick       # a short smoke run
//	go run ./bench/lab -out /tmp/lab  # also raw latencies (CSV), one SVG per scenario and overview.svg
//	go run ./bench/lab -sweep -phase 4s [-job 10ms]  # QueueDelay settings through the overload phases
//
// With -out, overview.svg draws the main table in one chart: each
// reference row's /fast p99 (with its range over the runs) and job p50
// beside the "only /fast" baseline, and each overload phase's goodput
// against capacity.
//
// Each scenario gets a fresh server process (the lab re-executes itself);
// all traffic stays on 127.0.0.1 and every run ends by itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/offloadgo/offload/natsremote"
)

func main() {
	natsremote.Main() // in a subprocess worker or a node (the proc and remote modes re-execute this binary): serve, exit
	jobsWorkerMain()  // in a durable-job worker process (the jobs mode): serve, exit
	if raw := os.Getenv(serverEnv); raw != "" {
		if err := serve(raw); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if _, err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "lab:", err)
		}
		os.Exit(2)
	}
}

// run parses args, runs every scenario and prints the table to stdout,
// progress to stderr. It returns the table's rows.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) ([]row, error) {
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 3*time.Second, "measured time of each run of a reference row")
	repeat := fs.Int("repeat", 3, "runs of each reference row; its /fast p99 is their median")
	phase := fs.Duration("phase", 2*time.Second, "length of each overload phase")
	rate := fs.Float64("rate", 100, "/fast requests per second (Poisson)")
	jobTime := fs.Duration("job", 200*time.Millisecond, "CPU time of one job")
	quick := fs.Bool("quick", false, "short smoke run: -duration 600ms -repeat 1 -phase 300ms, short warm-up")
	outDir := fs.String("out", "", "directory for latencies.csv, one SVG chart per scenario and overview.svg")
	only := fs.String("only", "", "run only the scenarios whose group or name contains this")
	overloadPool := fs.String("overload-pool", "pool1", "the overload scenarios' one-worker pool: pool1 (in process) or proc1 (subprocess)")
	sweep := fs.Bool("sweep", false, "instead of the table: sweep QueueDelay settings through the overload phases for -job jobs")
	seed := fs.Uint64("seed", 1, "seed of the arrival sequences (the same for every scenario)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *overloadPool != "pool1" && *overloadPool != "proc1" {
		return nil, fmt.Errorf("-overload-pool %q: want pool1 or proc1", *overloadPool)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	st := settings{Duration: *duration, Phase: *phase, Warmup: time.Second, Rate: *rate, JobTime: *jobTime, Seed: *seed, Repeat: *repeat}
	if *quick {
		st.Duration, st.Phase, st.Warmup, st.Repeat = 600*time.Millisecond, 300*time.Millisecond, 100*time.Millisecond, 1
	}
	if st.Duration <= 0 || st.Phase <= 0 || st.Rate <= 0 || st.JobTime <= 0 || st.Repeat <= 0 {
		return nil, errors.New("-duration, -phase, -rate, -job and -repeat must be positive")
	}
	st.Items = calibrate(st.JobTime)

	var csv *os.File
	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(*outDir, "latencies.csv"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		csv = f
		fmt.Fprintln(csv, csvHeader)
	}

	fmt.Fprintf(stdout, "offload lab: %v CPU jobs (%d items), /fast at %.0f/s, %d runs of %v per reference row (p99: their median), %v per overload phase; latencies in ms\n",
		st.JobTime, st.Items, st.Rate, st.Repeat, st.Duration, st.Phase)
	fmt.Fprintf(stdout, "overload: %s, %d worker (capacity %.1f jobs/s), clients give up after %v\n",
		*overloadPool, overloadWorkers, capacity(st.JobTime), overloadClientTimeout)
	list := scenarios(*overloadPool)
	if *sweep {
		list = sweepScenarios(st.JobTime, *overloadPool)
	}
	var all []scenario
	for _, sc := range list {
		if strings.Contains(sc.Group, *only) || strings.Contains(sc.label(), *only) {
			all = append(all, sc)
		}
	}
	var rows []row
	var results []outcome // each scenario's rows, for the overview chart; not its samples
	for i, sc := range all {
		progress := func(line string) { fmt.Fprintf(stderr, "\r[%d/%d] %-90s", i+1, len(all), line) }
		progress(sc.label() + ": starting")
		o := runScenario(ctx, st, sc, progress)
		summarize(&o, st)
		rows = append(rows, o.Rows...)
		results = append(results, outcome{Scenario: o.Scenario, NA: o.NA, Rows: o.Rows})
		if csv != nil {
			writeCSV(csv, o)
			if err := writeSVG(*outDir, o, st); err != nil {
				return rows, err
			}
		}
		if err := ctx.Err(); err != nil {
			return rows, err
		}
	}
	fmt.Fprintf(stderr, "\r%-100s\r", "")
	printTable(stdout, rows)
	printSweep(stdout, rows, capacity(st.JobTime))
	if !*sweep {
		printBars(stdout, judge(rows, capacity(st.JobTime)))
	}
	if *outDir != "" { // after the table, which a failed write must not cost
		if err := writeOverview(*outDir, results, capacity(st.JobTime)); err != nil {
			return rows, err
		}
	}
	return rows, nil
}
