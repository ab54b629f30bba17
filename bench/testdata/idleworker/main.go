// Command idleworker is the smallest program with a Subprocess pool: it
// starts one worker process, has it serve one task, lets it idle, and
// prints the worker's VmRSS, RssAnon and RssFile lines from
// /proc/PID/status. BenchmarkSubprocessIdleRSSMinimal builds and runs it:
// a worker's resident memory without the bench test binary's NATS server
// and OpenTelemetry.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/offloadgo/offload/pool"
)

var pid = pool.Register("idleworker.pid", func(context.Context, struct{}) (int, error) {
	return os.Getpid(), nil
})

func main() {
	pool.Main()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "idleworker:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	p, err := pool.New(pool.Options{Workers: 1, MinWorkers: 1, Isolation: pool.Subprocess})
	if err != nil {
		return err
	}
	defer p.Shutdown(ctx)
	worker, err := pool.Run(ctx, p, pid, struct{}{})
	if err != nil {
		return err
	}
	time.Sleep(20 * time.Millisecond) // idle, as BenchmarkSubprocessIdleRSS
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", worker))
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(status)) {
		for _, key := range []string{"VmRSS:", "RssAnon:", "RssFile:"} {
			if strings.HasPrefix(line, key) {
				fmt.Print(line)
			}
		}
	}
	return nil
}
