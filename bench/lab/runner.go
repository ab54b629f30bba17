package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// settings are the lab's flags, resolved.
type settings struct {
	Duration time.Duration // measured time of a reference row
	Phase    time.Duration // length of one overload phase
	Warmup   time.Duration // /fast traffic before measuring
	Rate     float64       // /fast requests per second
	JobTime  time.Duration // CPU per job
	Items    int           // items per job, calibrated to JobTime
	Repeat   int           // measured runs of a reference row
	Seed     uint64
}

// server is one running server process.
type server struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	base  string
	done  chan error
}

// startServer re-executes this binary as a server for cfg, with
// GOMAXPROCS=procs when procs > 0.
func startServer(ctx context.Context, cfg serverConfig, procs int) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serverEnv+"="+string(raw))
	if procs > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(procs))
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		a, err := readListen(stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		addr <- a
		_, _ = io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		if a == "" {
			s.stop()
			return nil, fmt.Errorf("lab: server for %+v did not start", cfg)
		}
		s.base = "http://" + a
		return s, nil
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	s.stop()
	return nil, fmt.Errorf("lab: server for %+v did not start in time", cfg)
}

// stop closes the server's stdin, which ends it, and waits; it kills the
// server if it lingers.
func (s *server) stop() {
	_ = s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// newClient is the load generator's client: keep-alive, enough idle
// connections for every request in flight, 127.0.0.1 only.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns:        2000,
		MaxIdleConnsPerHost: 2000,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
}

// outcome is what running one scenario produced.
type outcome struct {
	Scenario scenario
	NA       string // why the scenario could not run; "" when it did
	Samples  []sample
	Length   time.Duration // the measured window of one run
	Runs     int           // measured runs; each sample says which
	Stats    []serverStats // sampled at each phase end (overload), or at the end
	Client   []schedDist   // the load generator's scheduling latencies, at the same times
	Rows     []row         // filled by summarize
}

// runScenario starts a fresh server for sc, warms it up, offers the load
// and returns every sample. Progress lines go to progress.
func runScenario(ctx context.Context, st settings, sc scenario, progress func(string)) outcome {
	out := outcome{Scenario: sc}
	cfg := sc.Server
	cfg.Items = st.Items
	srv, err := startServer(ctx, cfg, sc.Procs)
	if err != nil {
		out.NA = err.Error()
		return out
	}
	defer srv.stop()
	client := newClient()
	defer client.CloseIdleConnections()
	g := &generator{client: client, base: srv.base, timeout: map[string]time.Duration{"fast": 10 * time.Second, "job": 30 * time.Second}}
	if sc.Phases != nil {
		g.timeout["job"] = overloadClientTimeout
	}
	g.timeout["ready"] = probeTimeout

	// Open 50 keep-alive connections first, as the reference does, so that
	// dialing doesn't mix into the measurements; then warm up with /fast
	// and one job (which also tells whether the mode works at all).
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { g.fire(ctx, time.Now(), arrival{stream: "fast", path: "/fast"}) })
	}
	wg.Wait()
	rng := rand.New(rand.NewPCG(st.Seed, 1))
	g.run(ctx, time.Now(), poisson(nil, rng, st.Rate, 0, st.Warmup, "fast", "/fast"), nil)
	if sc.Mode != "" {
		if na := probeJob(ctx, client, srv.base, sc.Mode); na != "" {
			out.NA = na
			return out
		}
	}
	g.take()

	// The measured runs: a reference scenario repeats its run (on the same
	// server, one after another) so that one stall of the shared machine
	// moves one run's p99, not the row's median.
	runs := 1
	if sc.Phases == nil {
		runs = st.Repeat
	}
	clientSched := newSchedWatch()
	for run := range runs {
		m := measure(ctx, g, srv.base, st, sc, run, clientSched, progress)
		for i := range m.samples {
			m.samples[i].Run = run
		}
		out.Samples = append(out.Samples, m.samples...)
		out.Stats = append(out.Stats, m.server...)
		out.Client = append(out.Client, m.client...)
		out.Length = m.length
		out.Runs = run + 1
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// overloadClientTimeout is how long an overload client waits for a job
// before it gives up (and its connection closes, which cancels the job).
const overloadClientTimeout = 2 * time.Second

// probeJob sends one job and says why the mode can't run, or "".
func probeJob(ctx context.Context, c *http.Client, base, mode string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/job?mode="+mode, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		return strings.TrimSpace(string(body))
	}
	return ""
}

// sampleStats reads /stats at the end of every phase (once at the end when
// phases is 0), calling also, if set, at the same moments.
func sampleStats(ctx context.Context, c *http.Client, base string, also func(), start time.Time, phase time.Duration, phases int) []serverStats {
	var out []serverStats
	for i := range max(phases, 1) {
		if phases > 0 {
			select {
			case <-time.After(time.Until(start.Add(time.Duration(i+1) * phase))):
			case <-ctx.Done():
				return out
			}
		}
		if also != nil {
			also()
		}
		var s serverStats
		if req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stats", nil); err == nil {
			if resp, err := c.Do(req); err == nil {
				_ = json.NewDecoder(resp.Body).Decode(&s)
				resp.Body.Close()
			}
		}
		out = append(out, s)
	}
	return out
}

func (sc scenario) label() string {
	if sc.Procs > 0 {
		return fmt.Sprintf("GOMAXPROCS=%d %s", sc.Procs, sc.Name)
	}
	return sc.Name
}
