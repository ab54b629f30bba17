package pool

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Isolation selects the kind of worker a Pool runs tasks on.
type Isolation int

const (
	// InProcess runs tasks on goroutines: the fastest kind, but a running
	// task stops only when it returns (its ctx is cancelled; it must look).
	InProcess Isolation = iota
	// Subprocess runs tasks in worker processes: the program's own binary
	// re-executed, which must call Main first thing in main (and TestMain).
	// A running task can be killed, a crash fails only its own task, and a
	// task's memory can be capped.
	Subprocess
)

func (i Isolation) String() string {
	switch i {
	case InProcess:
		return "InProcess"
	case Subprocess:
		return "Subprocess"
	}
	return fmt.Sprintf("Isolation(%d)", int(i))
}

// Special values of Options.MaxQueue.
const (
	// Unbounded lets the queue grow without limit: Submit never returns
	// ErrQueueFull. Use it for batch work whose size you bound yourself.
	Unbounded = -1
	// NoQueue makes Submit reject whenever every worker is busy.
	NoQueue = -2
)

// DefaultIdleTimeout is how long a worker above MinWorkers waits for work
// before it exits, when Options.IdleTimeout is zero.
const DefaultIdleTimeout = 10 * time.Second

// Options configures a Pool. The zero value is valid: InProcess workers,
// DefaultWorkers of them, a queue of Workers² and DefaultIdleTimeout.
type Options struct {
	// Workers is the most tasks that run at once. 0 means DefaultWorkers():
	// one less than GOMAXPROCS (at least 1), leaving a core for the
	// goroutines that serve requests.
	Workers int
	// MinWorkers are started by New and kept however idle. 0 means workers
	// start on demand. It must not exceed Workers.
	MinWorkers int
	// MaxQueue is how many accepted tasks may wait for a worker. 0 means
	// auto = Workers² (piscina's 'auto'); Unbounded and NoQueue are the
	// special values. The (Workers+MaxQueue+1)-th concurrent submission
	// fails at once with ErrQueueFull.
	MaxQueue int
	// Isolation is the kind of worker; the zero value is InProcess.
	Isolation Isolation
	// IdleTimeout is how long a worker above MinWorkers waits for a task
	// before it exits. 0 means DefaultIdleTimeout; negative is invalid.
	IdleTimeout time.Duration
}

// DefaultWorkers is the number of workers a Pool gets when Options.Workers
// is 0: GOMAXPROCS-1, but at least 1.
func DefaultWorkers() int {
	return max(1, runtime.GOMAXPROCS(0)-1)
}

// errSubprocessNotBuilt is New's answer to Isolation: Subprocess until the
// subprocess worker lands (issue 3).
var errSubprocessNotBuilt = errors.New("pool: Isolation Subprocess is not available yet")

// settings are Options with every default filled in and every value checked.
type settings struct {
	Options
	capacity int // Workers + MaxQueue, or -1 for unbounded
}

func (o Options) settle() (settings, error) {
	if o.Workers < 0 {
		return settings{}, fmt.Errorf("pool: Workers is %d, want >= 0", o.Workers)
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers()
	}
	if o.MinWorkers < 0 || o.MinWorkers > o.Workers {
		return settings{}, fmt.Errorf("pool: MinWorkers is %d, want 0..Workers (%d)", o.MinWorkers, o.Workers)
	}
	if o.IdleTimeout < 0 {
		return settings{}, fmt.Errorf("pool: IdleTimeout is %v, want >= 0", o.IdleTimeout)
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	s := settings{Options: o}
	switch {
	case o.MaxQueue == 0:
		s.MaxQueue = o.Workers * o.Workers
		s.capacity = o.Workers + s.MaxQueue
	case o.MaxQueue == Unbounded:
		s.capacity = -1
	case o.MaxQueue == NoQueue:
		s.capacity = o.Workers
	case o.MaxQueue > 0:
		s.capacity = o.Workers + o.MaxQueue
	default:
		return settings{}, fmt.Errorf("pool: MaxQueue is %d, want >= 0, Unbounded or NoQueue", o.MaxQueue)
	}
	switch o.Isolation {
	case InProcess:
	case Subprocess:
		return settings{}, errSubprocessNotBuilt
	default:
		return settings{}, fmt.Errorf("pool: unknown %v", o.Isolation)
	}
	return s, nil
}
