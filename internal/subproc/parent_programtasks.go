package subproc

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/workerproc"
)

// What a program serves is what its workers' hellos list: a worker node
// passes calls to a pool of a program without the Go types of their
// tasks, and takes only those names (seam.Program).

var _ seam.Program = (*ProcessCarrier)(nil)

// programTasks is the task list of one hello, as heard.
type programTasks struct {
	names []string // sorted
	set   map[string]struct{}
}

// probeID numbers the process Tasks starts to hear a hello, in logs: the
// pool numbers its workers from 1.
const probeID = 0

// heard records the tasks of a worker's hello, the latest one heard.
func (sp *ProcessCarrier) heard(set map[string]struct{}) { sp.served.Store(tasksOf(set)) }

// tasksOf is the task list of a hello that named set.
func tasksOf(set map[string]struct{}) *programTasks {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	return &programTasks{names: names, set: set}
}

// Serves reports whether the latest hello heard listed task.
func (sp *ProcessCarrier) Serves(task string) bool {
	t := sp.served.Load()
	if t == nil {
		return false
	}
	_, ok := t.set[task]
	return ok
}

// Tasks names the tasks the latest hello heard listed. Before any, it
// starts a process of the program to hear its hello, and closes it: one
// at a time, bounded by ctx and the pool's stop.
func (sp *ProcessCarrier) Tasks(ctx context.Context) ([]string, error) {
	if !sp.program {
		return nil, fmt.Errorf("pool: the workers of a pool without Subprocess.Command are this binary, not a program")
	}
	if t := sp.served.Load(); t != nil {
		return slices.Clone(t.names), nil
	}
	sp.probe.Lock()
	defer sp.probe.Unlock()
	if t := sp.served.Load(); t != nil {
		return slices.Clone(t.names), nil
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(sp.stop, stop)()
	spec := sp.spec
	spec.ID = probeID
	p, err := workerproc.Start(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", seam.ErrWorkerStartFailed, sp.command, err)
	}
	_ = p.Close()
	set := make(map[string]struct{}, len(p.Hello().Tasks))
	for _, n := range p.Hello().Tasks {
		set[n] = struct{}{}
	}
	sp.served.CompareAndSwap(nil, tasksOf(set)) // a worker's hello, heard meanwhile, is newer
	return slices.Clone(sp.served.Load().names), nil
}

// probing holds what Tasks needs beside the carrier's other fields.
type probing struct {
	served atomic.Pointer[programTasks] // the latest hello's; nil before one
	probe  sync.Mutex                   // one Tasks start at a time
}
