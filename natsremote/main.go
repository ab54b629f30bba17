package natsremote

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/internal/nodehook"
	"github.com/offloadgo/offload/pool"
)

// The environment that makes pool.Main serve as a worker node (in a binary
// that imports this package):
//
//	OFFLOAD_NATS_URL        the NATS server(s) to connect to, comma-separated (required)
//	OFFLOAD_NATS_POOL       ServeOptions.Pool; default "offload"
//	OFFLOAD_NATS_WORKERS    Local.Workers; default pool.DefaultWorkers()
//	OFFLOAD_NATS_ISOLATION  Local.Isolation: "inprocess" (default) or "subprocess"
//	OFFLOAD_NATS_HEARTBEAT  ServeOptions.Heartbeat, as time.ParseDuration reads it
//	OFFLOAD_NATS_NAME       ServeOptions.Name
//	OFFLOAD_NATS_DRAIN      ServeOptions.Drain, as time.ParseDuration reads it
const (
	EnvURL       = "OFFLOAD_NATS_URL" // what pool.Main looks for
	EnvPool      = "OFFLOAD_NATS_POOL"
	EnvWorkers   = "OFFLOAD_NATS_WORKERS"
	EnvIsolation = "OFFLOAD_NATS_ISOLATION"
	EnvHeartbeat = "OFFLOAD_NATS_HEARTBEAT"
	EnvName      = "OFFLOAD_NATS_NAME"
	EnvDrain     = "OFFLOAD_NATS_DRAIN"
)

// Registering the node's entry point only fills in a variable: no
// goroutine, no network, until pool.Main finds OFFLOAD_NATS_URL set.
func init() { nodehook.Serve = serveFromEnv }

// serveFromEnv is a node process's life, for pool.Main: Serve as the
// environment says until SIGINT or SIGTERM. Status 0 after a signal, 1 if
// serving failed, 2 for a bad environment.
func serveFromEnv() int {
	o, err := optionsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsremote: node:", err)
		return 2
	}
	nc, err := nats.Connect(os.Getenv(EnvURL), nats.Name("offload node "+o.Pool), nats.MaxReconnects(-1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsremote: node: connect:", err)
		return 1
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Serve(ctx, nc, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// optionsFromEnv reads ServeOptions from the environment.
func optionsFromEnv() (ServeOptions, error) {
	o := ServeOptions{Pool: "offload", Name: os.Getenv(EnvName)}
	if v := os.Getenv(EnvPool); v != "" {
		o.Pool = v
	}
	if v := os.Getenv(EnvWorkers); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return o, fmt.Errorf("%s=%q: %w", EnvWorkers, v, err)
		}
		o.Local.Workers = n
	}
	switch v := strings.ToLower(os.Getenv(EnvIsolation)); v {
	case "", "inprocess":
	case "subprocess":
		o.Local.Isolation = pool.Subprocess
	default:
		return o, fmt.Errorf("%s=%q: want inprocess or subprocess", EnvIsolation, v)
	}
	for env, d := range map[string]*time.Duration{EnvHeartbeat: &o.Heartbeat, EnvDrain: &o.Drain} {
		if v := os.Getenv(env); v != "" {
			var err error
			if *d, err = time.ParseDuration(v); err != nil {
				return o, fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	}
	return o, nil
}
