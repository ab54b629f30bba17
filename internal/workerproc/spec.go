package workerproc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// Spec describes the worker process to start. The zero value starts the
// running program itself as a worker with every default. The worker runs
// in a process group of its own, killed with it (see the package doc).
type Spec struct {
	// Path is the binary to run. Default: os.Executable(), the program
	// itself, which must call Attach first thing in main.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env holds extra "KEY=value" entries added to the supervisor's own
	// environment (later entries win). Unless GORACE is set, the worker
	// gets GORACE=atexit_sleep_ms=0, so that a -race build exits at once.
	Env []string
	// Dir is the working directory; empty means the supervisor's.
	Dir string
	// ID identifies the worker in logs and errors ("worker 3").
	ID int
	// Logger receives each line the worker prints to stdout or stderr as a
	// record at level Info whose message is the line, with attributes
	// worker (ID), pid and stream ("stdout" or "stderr"); a line longer than
	// 4 KiB comes in 4 KiB pieces. Default: slog.Default().
	Logger *slog.Logger
	// MaxFrame is the largest frame body either side sends or accepts.
	// Default: DefaultMaxFrame; at most MaxFrameLimit.
	MaxFrame int
	// MemoryLimit is the worker's memory limit in bytes; 0 means none. The
	// supervisor kills the worker (and its process group) when what it
	// counts exceeds the limit: the worker's RSS, sampled every
	// MemoryPoll, plus, sampled every 100 ms, its descendants' memory and
	// the memfds they and the worker hold (see the package doc). It also
	// sets GOMEMLIMIT in the worker's environment to the limit (unless Env
	// sets it) so the worker's garbage collector works to stay under it
	// first.
	//
	// It is not a hard cap: a fast allocation can overshoot it between two
	// samples, and some memory escapes the count (the package doc says
	// which). A hard cap would need a cgroup v2 subtree delegated to the
	// program, which a library cannot assume, and RLIMIT_AS breaks Go
	// programs (and -race builds above all), which reserve far more
	// address space than they use. Only Linux can sample the memory:
	// elsewhere Start refuses a MemoryLimit with an error matching
	// errors.ErrUnsupported.
	MemoryLimit int64
	// MemoryPoll is the interval at which the worker's RSS is sampled
	// (its descendants' every 100 ms or every MemoryPoll, whichever is
	// longer, and less often if a sample takes over 10 ms). Default: 5 ms.
	MemoryPoll time.Duration
	// StartTimeout bounds the wait for the worker's hello. Default: 10 s.
	StartTimeout time.Duration
	// CloseGrace is how long Close lets the worker exit by itself after
	// its channel closed before killing it. Default: 1 s.
	CloseGrace time.Duration
	// Protocol is the version the worker's hello must name. Default:
	// ProtocolVersion, this package's, which a Go worker of the same
	// build speaks; a program of another language speaks its own
	// dialect's (see internal/subproc's program dialect).
	Protocol int
	// Plain keeps every frame's body on the frame pipes (descriptors 3
	// and 4 in the worker), with no bulk socket: for a worker that reads
	// only those, such as a program of another language. The worker gets
	// descriptor 5 all the same.
	Plain bool
}

const (
	defaultMemoryPoll   = 5 * time.Millisecond
	defaultStartTimeout = 10 * time.Second
	defaultCloseGrace   = time.Second
)

// withDefaults validates s and fills in its defaults.
func (s Spec) withDefaults() (Spec, error) {
	switch {
	case s.MaxFrame < 0 || s.MaxFrame > MaxFrameLimit:
		return s, fmt.Errorf("workerproc: Spec.MaxFrame %d outside [0, %d]", s.MaxFrame, MaxFrameLimit)
	case s.MemoryLimit < 0:
		return s, fmt.Errorf("workerproc: negative Spec.MemoryLimit %d", s.MemoryLimit)
	case s.MemoryPoll < 0 || s.StartTimeout < 0 || s.CloseGrace < 0:
		return s, errors.New("workerproc: negative duration in Spec")
	case s.Protocol < 0:
		return s, fmt.Errorf("workerproc: negative Spec.Protocol %d", s.Protocol)
	}
	if s.MemoryLimit > 0 {
		if err := memoryLimitSupport(); err != nil {
			return s, err
		}
	}
	if s.Path == "" {
		exe, err := os.Executable()
		if err != nil {
			return s, fmt.Errorf("workerproc: find the program to run as worker: %w", err)
		}
		s.Path = exe
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.MaxFrame == 0 {
		s.MaxFrame = DefaultMaxFrame
	}
	if s.MemoryPoll == 0 {
		s.MemoryPoll = defaultMemoryPoll
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = defaultStartTimeout
	}
	if s.CloseGrace == 0 {
		s.CloseGrace = defaultCloseGrace
	}
	if s.Protocol == 0 {
		s.Protocol = ProtocolVersion
	}
	return s, nil
}

// environ is the worker's environment: the supervisor's without any worker
// variables it may itself have inherited, then Spec.Env, then ours.
func (s Spec) environ(parent int) []string {
	env := make([]string, 0, len(os.Environ())+len(s.Env)+4)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvWorker) {
			env = append(env, kv)
		}
	}
	env = append(env, s.Env...)
	// A worker built with -race otherwise sleeps 1 s at exit (the race
	// runtime's atexit_sleep_ms) and so would outlive every Close grace.
	if !hasKey(env, "GORACE") {
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	if s.MemoryLimit > 0 && !hasKey(s.Env, "GOMEMLIMIT") {
		env = append(env, "GOMEMLIMIT="+strconv.FormatInt(s.MemoryLimit, 10))
	}
	return append(env,
		EnvWorker+"=1",
		EnvParent+"="+strconv.Itoa(parent),
		EnvMaxFrame+"="+strconv.Itoa(s.MaxFrame))
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			return true
		}
	}
	return false
}
