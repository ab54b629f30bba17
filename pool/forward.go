package pool

import (
	"context"
	"errors"
	"fmt"

	"github.com/offloadgo/offload/internal/blobjson"
	"github.com/offloadgo/offload/internal/prof"
	"github.com/offloadgo/offload/internal/seam"
)

// A worker node whose pool runs a program of another language serves the
// tasks the program's hello lists, without the Go types of those tasks:
// it passes their inputs and outputs on as they crossed (JSON and a blob),
// undecoded.

// ProgramTasks names, sorted, the tasks that the program of a Subprocess
// pool with a Command serves, as the hello of its latest started worker
// listed them. Before any worker has started, it starts one process of
// the program to hear its hello, and closes it: then it blocks until the
// hello, StartTimeout, ctx's end or Close, and a failure matches
// ErrWorkerStartFailed and names the command. On any other pool it fails
// at once. Safe for concurrent use.
func (p *Pool) ProgramTasks(ctx context.Context) ([]string, error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	prog, ok := p.transport.(seam.Program)
	if !ok || p.opts.placement != inProgram {
		return nil, errors.New("pool: ProgramTasks on a pool without Subprocess.Command: its tasks are Go's (Register)")
	}
	return prog.Tasks(ctx)
}

// forwardedValue is the type of an Extern task's input or output passed
// on undecoded, named here so that go doc prints no internal package.
type forwardedValue = blobjson.Raw

// Forward is for package natsremote's worker node, which calls it for each
// call to an Extern task that it passes on to p, a Subprocess pool with a
// Command: in is the input as it crossed, undecoded (a type only this
// module can name), and wait returns the output so. A task that the
// latest hello of p's program did not list (see ProgramTasks) is refused
// at once with ErrUnknownTask; otherwise the call is admitted as Submit
// admits it, without waiting for room, and runs as the program's tasks
// run (TerminateGrace, MemoryLimit, ErrWorkerCrashed…). freed, if not
// nil, is called once the call's slot is free again: for a call whose ctx
// ended, when the program has answered it or been killed, which may be
// after wait has returned.
func (p *Pool) Forward(ctx context.Context, task string, in forwardedValue, freed func()) (wait func() (forwardedValue, error), err error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	prog, ok := p.transport.(seam.Program)
	switch {
	case !ok || p.opts.placement != inProgram:
		return nil, fmt.Errorf("%w: task %q: the pool's workers are not a program of another language (Subprocess.Command)", ErrUnknownTask, task)
	case !prog.Serves(task):
		return nil, fmt.Errorf("%w: task %q is not among those the pool's program serves (its latest hello)", ErrUnknownTask, task)
	}
	// A definition of its own per call: the names come from elsewhere,
	// and nothing is kept by them (Run's recycling is not used).
	t := Task[forwardedValue, forwardedValue]{def: &taskDef[forwardedValue, forwardedValue]{
		name:   task,
		extern: true,
		index:  -1,
		labels: prof.New(task, Subprocess.String()),
	}}
	c := newCall(ctx, t, in)
	c.freed = freed
	if err := p.admit(c, admitNow|admitWatch); err != nil {
		return nil, err
	}
	return c.Wait, nil
}
