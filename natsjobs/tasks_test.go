package natsjobs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/pool"
)

type Num struct{ N int }

// runs counts the runs of the tasks below by their input's Key.
var runs = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

func ran(key string) int {
	runs.Lock()
	defer runs.Unlock()
	runs.n[key]++
	return runs.n[key]
}

func runCount(key string) int {
	runs.Lock()
	defer runs.Unlock()
	return runs.n[key]
}

type Keyed struct {
	Key   string
	Sleep time.Duration
}

var (
	double = pool.Register("natsjobs.double", func(_ context.Context, in Num) (int, error) {
		return 2 * in.N, nil
	})
	flaky = pool.Register("natsjobs.flaky", func(_ context.Context, in Keyed) (string, error) {
		if ran(in.Key) == 1 {
			return "", errors.New("flake")
		}
		return "fine", nil
	})
	always = pool.Register("natsjobs.always", func(_ context.Context, in Keyed) (string, error) {
		ran(in.Key)
		return "", errors.New("still broken")
	})
	permanent = pool.Register("natsjobs.permanent", func(_ context.Context, in Keyed) (string, error) {
		ran(in.Key)
		return "", natsjobs.Permanent(errors.New("bad input, not worth retrying"))
	})
	panicky = pool.Register("natsjobs.panicky", func(_ context.Context, in Keyed) (string, error) {
		ran(in.Key)
		panic("boom in the task")
	})
	// sleepy runs for in.Sleep, or until its ctx ends.
	sleepy = pool.Register("natsjobs.sleepy", func(ctx context.Context, in Keyed) (string, error) {
		ran(in.Key)
		select {
		case <-time.After(in.Sleep):
			return "slept", nil
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	})
	withChan = pool.Register("natsjobs.withchan", func(_ context.Context, in struct{ C chan int }) (int, error) {
		return 0, nil
	})
	// Second is the input of a later build of a task whose In was First.
	second = pool.Register("natsjobs.second", func(_ context.Context, in Second) (string, error) {
		return in.Name + "/" + in.Added, nil
	})
)

type First struct{ Name string }

type Second struct {
	Added string
	Name  string
}

// keys holds each running test's key (see key).
var keys = struct {
	sync.Mutex
	next int
	of   map[*testing.T]string
}{of: map[*testing.T]string{}}

// key is a key for runs unique to this run of test t (-count reruns it).
func key(t *testing.T) string {
	keys.Lock()
	defer keys.Unlock()
	k, ok := keys.of[t]
	if !ok {
		keys.next++
		k = fmt.Sprintf("%s#%d", t.Name(), keys.next)
		keys.of[t] = k
		t.Cleanup(func() {
			keys.Lock()
			defer keys.Unlock()
			delete(keys.of, t)
		})
	}
	return k
}

var (
	// big answers with n bytes.
	big = pool.Register("natsjobs.big", func(_ context.Context, n int) ([]byte, error) {
		return make([]byte, n), nil
	})
	// goexit ends its goroutine instead of returning.
	goexit = pool.Register("natsjobs.goexit", func(_ context.Context, in Keyed) (string, error) {
		ran(in.Key)
		runtime.Goexit()
		return "", nil
	})
)

// Stubborn is how long stubborn runs, and the file it makes as it
// starts ("" for none).
type Stubborn struct {
	Sleep   time.Duration
	Started string
}

// stubborn ignores its ctx.
var stubborn = pool.Register("natsjobs.stubborn", func(_ context.Context, in Stubborn) (string, error) {
	if in.Started != "" {
		if err := os.WriteFile(in.Started, nil, 0o600); err != nil {
			return "", err
		}
	}
	time.Sleep(in.Sleep)
	return "done", nil
})
