package pool

import (
	"errors"
	"fmt"
	"math"

	"github.com/offloadgo/offload/internal/subproc"
)

// settings are Options with every default filled in and every value checked.
// SetWorkers changes Workers, MinWorkers, MaxQueue and capacity (under the
// pool's lock, field by field); the rest never changes after New.
type settings struct {
	Options
	capacity  int // Workers + MaxQueue, or -1 for unbounded
	queue     queuePolicy
	placement placement // where the tasks run: which the pool takes
}

// queuePolicy is how a pool's MaxQueue follows its Workers: auto (Workers²),
// fixed, none or unbounded. It never changes after New, so the readers
// that don't take the pool's lock (a Remote pool's capacity) may read it.
type queuePolicy struct {
	auto  bool // MaxQueue was 0: Workers², for however many workers
	fixed int  // MaxQueue as given, when positive: kept whatever Workers
	kind  int  // MaxQueue as given when it is a special value (Unbounded, NoQueue); 0 otherwise
}

// capacityFor is the capacity of a pool running workers tasks at once:
// how many tasks it may hold, running and queued; -1 for no limit. No
// workers, no capacity: nothing could run.
func (q *queuePolicy) capacityFor(workers int) int {
	switch {
	case workers <= 0:
		return 0
	case q.auto:
		return saturatingAdd(workers, saturatingMul(workers, workers))
	case q.kind == Unbounded:
		return -1
	case q.kind == NoQueue:
		return workers
	}
	return saturatingAdd(workers, q.fixed)
}

// setWorkers makes s the settings of a pool of n workers: MinWorkers is
// lowered to n if above it, and the capacity (and an auto MaxQueue)
// follows n.
func (s *settings) setWorkers(n int) {
	s.Workers = n
	s.MinWorkers = min(s.MinWorkers, n)
	s.capacity = s.queue.capacityFor(n)
	if s.queue.kind == 0 {
		s.MaxQueue = s.capacity - n // lowered to fit, if Workers + MaxQueue saturates
	}
}

// fillDefaults checks o and returns it as the pool's settings, its defaults
// filled in.
func (o Options) fillDefaults() (settings, error) {
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
	if o.SlowTaskAfter < 0 {
		return settings{}, fmt.Errorf("pool: SlowTaskAfter is %v, want >= 0 (0 reports no task)", o.SlowTaskAfter)
	}
	if err := o.QueueDelay.check(); err != nil {
		return settings{}, err
	}
	s := settings{Options: o}
	switch {
	case o.MaxQueue == 0:
		s.queue.auto = true
	case o.MaxQueue > 0:
		s.queue.fixed = o.MaxQueue
	case o.MaxQueue == Unbounded, o.MaxQueue == NoQueue:
		s.queue.kind = o.MaxQueue
	default:
		return settings{}, fmt.Errorf("pool: MaxQueue is %d, want >= 0, Unbounded or NoQueue", o.MaxQueue)
	}
	s.setWorkers(o.Workers)
	if o.Transport != nil && o.Isolation == InProcess {
		o.Isolation = Remote // a transport says where the tasks go
		s.Isolation = Remote
	}
	switch o.Isolation {
	case InProcess, Remote, Subprocess:
	default:
		return settings{}, fmt.Errorf("pool: unknown %v", o.Isolation)
	}
	switch {
	case o.Isolation != Subprocess && !o.Subprocess.isZero():
		return settings{}, fmt.Errorf("pool: Options.Subprocess is set (%+v) but Isolation is %v, which would ignore it", o.Subprocess, o.Isolation)
	case o.Isolation == Remote && o.Transport == nil:
		return settings{}, errors.New("pool: Isolation Remote needs Options.Transport (see package natsremote)")
	case o.Isolation != Remote && o.Transport != nil:
		return settings{}, fmt.Errorf("pool: Options.Transport is set but Isolation is %v, which would ignore it", o.Isolation)
	case o.Isolation == Subprocess:
		if err := s.Subprocess.fillDefaults(); err != nil {
			return settings{}, err
		}
	}
	s.placement = placementOf(&s.Options)
	return s, nil
}

// fillDefaults checks the Subprocess knobs and fills in their defaults.
func (s *SubprocessOptions) fillDefaults() error {
	switch {
	case s.TerminateGrace < 0:
		return fmt.Errorf("pool: Subprocess.TerminateGrace is %v, want >= 0", s.TerminateGrace)
	case s.MaxTasksPerWorker < 0:
		return fmt.Errorf("pool: Subprocess.MaxTasksPerWorker is %d, want >= 0", s.MaxTasksPerWorker)
	case s.MemoryLimit < 0:
		return fmt.Errorf("pool: Subprocess.MemoryLimit is %d, want >= 0", s.MemoryLimit)
	case s.MaxPayload < 0 || s.MaxPayload > MaxPayloadLimit:
		return fmt.Errorf("pool: Subprocess.MaxPayload is %d, want 0..%d", s.MaxPayload, MaxPayloadLimit)
	case s.StartTimeout < 0:
		return fmt.Errorf("pool: Subprocess.StartTimeout is %v, want >= 0", s.StartTimeout)
	case s.GOMAXPROCS < -1:
		return fmt.Errorf("pool: Subprocess.GOMAXPROCS is %d, want >= 1, 0 for the default or -1 for the runtime's", s.GOMAXPROCS)
	case s.Nice < 0 || s.Nice > subproc.MaxNice:
		return fmt.Errorf("pool: Subprocess.Nice is %d, want 0..%d (an increment: lower priority only)", s.Nice, subproc.MaxNice)
	case len(s.Command) == 0 && (s.Dir != "" || len(s.Env) > 0):
		return errors.New("pool: Subprocess.Dir and Env apply to a Command only (a worker of this binary inherits the pool's)")
	case len(s.Command) > 0 && s.Command[0] == "":
		return errors.New("pool: Subprocess.Command[0], the program, is empty")
	case len(s.Command) > 0 && s.GOMAXPROCS != 0:
		return fmt.Errorf("pool: Subprocess.GOMAXPROCS is %d, but a Command's program is not a Go worker of this binary: it sets its own parallelism (for a Go program, put GOMAXPROCS in Env)", s.GOMAXPROCS)
	}
	*s = s.clone()
	if s.MaxPayload == 0 {
		s.MaxPayload = DefaultMaxPayload
	}
	return nil
}

// saturatingAdd and saturatingMul are a+b and a*b for non-negative ints,
// held at math.MaxInt rather than wrapped: Workers + MaxQueue must stay a
// capacity, however large the Options.
func saturatingAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func saturatingMul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}
