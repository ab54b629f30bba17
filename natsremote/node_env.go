package natsremote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/subproc"
	"github.com/offloadgo/offload/pool"
)

// The environment that makes Main serve as a worker node.
// OFFLOAD_NATS_URL is required; the rest have defaults:
//
//	OFFLOAD_NATS_URL                 the NATS server(s) to connect to, comma-separated
//	OFFLOAD_NATS_POOL                ServeOptions.Pool; default "offload"
//	OFFLOAD_NATS_NAME                ServeOptions.Name (and what the node's NATS user may subscribe to: see NodePermissions)
//	OFFLOAD_NATS_WORKERS             Local.Workers; default pool.DefaultWorkers()
//	OFFLOAD_NATS_ISOLATION           Local.Isolation: "inprocess" (default) or "subprocess"
//	OFFLOAD_NATS_HEARTBEAT           ServeOptions.Heartbeat, as time.ParseDuration reads it
//	OFFLOAD_NATS_DRAIN               ServeOptions.Drain, as time.ParseDuration reads it: 0 (default) means DefaultDrain, "none" NoDrain
//	OFFLOAD_NATS_MEMORY_LIMIT        Local.Subprocess.MemoryLimit: bytes, or with KiB, MiB, GiB (subprocess only)
//	OFFLOAD_NATS_TERMINATE_GRACE     Local.Subprocess.TerminateGrace, a duration (subprocess only)
//	OFFLOAD_NATS_MAX_TASKS_PER_WORKER Local.Subprocess.MaxTasksPerWorker (subprocess only)
//	OFFLOAD_NATS_LOG_LEVEL           debug, info (default), warn or error: the node logs to stderr
//	OFFLOAD_NATS_CREDS               a NATS credentials file (JWT and NKey seed), for nats.UserCredentials
//	OFFLOAD_NATS_NKEY                an NKey seed file, for nats.NkeyOptionFromSeed
//	OFFLOAD_NATS_TLS_CA              PEM file of the CAs that sign the servers' certificates
//	OFFLOAD_NATS_TLS_CERT            PEM file of the node's client certificate (with OFFLOAD_NATS_TLS_KEY)
//	OFFLOAD_NATS_TLS_KEY             PEM file of its private key
//
// A URL with user and password (nats://user:pass@host:4222) works too;
// credentials in files keep them out of the process's environment.
const (
	EnvURL               = "OFFLOAD_NATS_URL" // what Main looks for (and pool.Main refuses)
	EnvPool              = "OFFLOAD_NATS_POOL"
	EnvName              = "OFFLOAD_NATS_NAME"
	EnvWorkers           = "OFFLOAD_NATS_WORKERS"
	EnvIsolation         = "OFFLOAD_NATS_ISOLATION"
	EnvHeartbeat         = "OFFLOAD_NATS_HEARTBEAT"
	EnvDrain             = "OFFLOAD_NATS_DRAIN"
	EnvMemoryLimit       = "OFFLOAD_NATS_MEMORY_LIMIT"
	EnvTerminateGrace    = "OFFLOAD_NATS_TERMINATE_GRACE"
	EnvMaxTasksPerWorker = "OFFLOAD_NATS_MAX_TASKS_PER_WORKER"
	EnvLogLevel          = "OFFLOAD_NATS_LOG_LEVEL"
	EnvCreds             = "OFFLOAD_NATS_CREDS"
	EnvNKey              = "OFFLOAD_NATS_NKEY"
	EnvTLSCA             = "OFFLOAD_NATS_TLS_CA"
	EnvTLSCert           = "OFFLOAD_NATS_TLS_CERT"
	EnvTLSKey            = "OFFLOAD_NATS_TLS_KEY"
)

// Main is pool.Main for a binary that may also be a worker node: call it
// first thing in main instead of pool.Main (and in TestMain, for tests
// that start node processes):
//
//	func main() {
//		natsremote.Main()
//		...
//	}
//
// In a process started as a Subprocess pool's worker it serves as
// pool.Main does and never returns. With OFFLOAD_NATS_URL set (see EnvURL
// and the variables beside it) it serves the registered tasks as a worker
// node until the process gets SIGINT or SIGTERM, then leaves as Serve
// does, finishing its running calls within OFFLOAD_NATS_DRAIN (25 s by
// default: see ServeOptions.Drain); a second signal ends the process at
// once. It exits with status 0 after a signal, 1 if serving failed, 2
// for a bad environment, including credentials that can't serve the
// node's subjects (Serve's error names the subject refused). In any other
// process it returns at once, having done nothing but read environment
// variables.
//
// opts, at most one (more panics), configures both sides as pool.Main's
// does: with a Tracer, a task continues the trace its caller's pool sent
// with it, in a worker process and on the node, where the node's pool
// (ServeOptions.Local.Tracer) also gives each task a span of its own.
func Main(opts ...pool.MainOptions) {
	if len(opts) > 1 {
		panic("natsremote: Main takes at most one pool.MainOptions")
	}
	var o pool.MainOptions
	if len(opts) == 1 {
		o = opts[0]
	}
	var extract subproc.Extract
	if o.Tracer != nil {
		extract = o.Tracer.Extract
	}
	if code, worker := subproc.ServeWorker(extract); worker {
		os.Exit(code)
	}
	if os.Getenv(EnvURL) != "" {
		os.Exit(serveFromEnv(o))
	}
}

// serveFromEnv is a node process's life: Serve as the environment says,
// with mo's Tracer for its pool, until SIGINT or SIGTERM, and the exit
// status.
func serveFromEnv(mo pool.MainOptions) int {
	o, err := optionsFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsremote: node:", err)
		return 2
	}
	o.Local.Tracer = mo.Tracer
	connect, err := connectOptionsFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsremote: node:", err)
		return 2
	}
	connect = append(connect, nats.Name("offload node "+o.Pool), nats.MaxReconnects(-1))
	nc, err := nats.Connect(os.Getenv(EnvURL), connect...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsremote: node: connect:", err)
		return 1
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Once the first signal has started the drain, a second one gets
	// Go's default: the process ends at once.
	context.AfterFunc(ctx, stop)
	if err := Serve(ctx, nc, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, nats.ErrPermissionViolation) {
			return 2 // its credentials: restarting it would not help
		}
		return 1
	}
	return 0
}

// optionsFromEnv reads ServeOptions from the environment, through getenv.
func optionsFromEnv(getenv func(string) string) (ServeOptions, error) {
	o := ServeOptions{Pool: "offload", Name: getenv(EnvName)}
	if v := getenv(EnvPool); v != "" {
		o.Pool = v
	}
	switch v := strings.ToLower(getenv(EnvIsolation)); v {
	case "", "inprocess":
	case "subprocess":
		o.Local.Isolation = pool.Subprocess
	default:
		return o, fmt.Errorf("%s=%q: want inprocess or subprocess", EnvIsolation, v)
	}
	sub := &o.Local.Subprocess
	for env, n := range map[string]*int{EnvWorkers: &o.Local.Workers, EnvMaxTasksPerWorker: &sub.MaxTasksPerWorker} {
		if v := getenv(env); v != "" {
			var err error
			if *n, err = strconv.Atoi(v); err != nil {
				return o, fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	}
	for env, d := range map[string]*time.Duration{EnvHeartbeat: &o.Heartbeat, EnvTerminateGrace: &sub.TerminateGrace} {
		if v := getenv(env); v != "" {
			var err error
			if *d, err = time.ParseDuration(v); err != nil {
				return o, fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	}
	if v := getenv(EnvDrain); v != "" {
		var err error
		if o.Drain, err = parseDrain(v); err != nil {
			return o, fmt.Errorf("%s=%q: %w", EnvDrain, v, err)
		}
	}
	if v := getenv(EnvMemoryLimit); v != "" {
		n, err := parseBytes(v)
		if err != nil {
			return o, fmt.Errorf("%s=%q: %w", EnvMemoryLimit, v, err)
		}
		sub.MemoryLimit = n
	}
	if v := getenv(EnvLogLevel); v != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return o, fmt.Errorf("%s=%q: want debug, info, warn or error", EnvLogLevel, v)
		}
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	return o, nil
}

// connectOptionsFromEnv reads the node's credentials and TLS files.
func connectOptionsFromEnv(getenv func(string) string) ([]nats.Option, error) {
	var opts []nats.Option
	if f := getenv(EnvCreds); f != "" {
		opts = append(opts, nats.UserCredentials(f))
	}
	if f := getenv(EnvNKey); f != "" {
		opt, err := nats.NkeyOptionFromSeed(f)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", EnvNKey, f, err)
		}
		opts = append(opts, opt)
	}
	if f := getenv(EnvTLSCA); f != "" {
		opts = append(opts, nats.RootCAs(f))
	}
	switch cert, key := getenv(EnvTLSCert), getenv(EnvTLSKey); {
	case cert != "" && key != "":
		opts = append(opts, nats.ClientCert(cert, key))
	case cert != "" || key != "":
		return nil, fmt.Errorf("%s and %s go together", EnvTLSCert, EnvTLSKey)
	}
	return opts, nil
}

// parseDrain reads a drain: a duration, 0 for DefaultDrain, or "none"
// for NoDrain.
func parseDrain(v string) (time.Duration, error) {
	if strings.EqualFold(v, "none") {
		return NoDrain, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, errors.New("want a duration such as 25s (0 for the default), or none")
	}
	return d, nil
}

// parseBytes reads a size: a count of bytes, or one with a suffix KiB,
// MiB, GiB (or KB, MB, GB, in powers of 1000).
func parseBytes(v string) (int64, error) {
	units := []struct {
		suffix string
		size   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	scale := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(v, u.suffix); ok {
			v, scale = strings.TrimSpace(rest), u.size
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/scale {
		return 0, fmt.Errorf("want a size in bytes, such as 536870912 or 512MiB")
	}
	return n * scale, nil
}
