package pool

import (
	"runtime"

	"github.com/offloadgo/offload/internal/subproc"
)

// WaitersForTest reports how many SubmitBlocking callers are waiting.
func WaitersForTest(p *Pool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters.w)
}

// SubprocessSupportedForTest is New's platform check for Isolation
// Subprocess on the running platform: nil where worker processes run.
func SubprocessSupportedForTest() error { return subproc.PlatformSupport(runtime.GOOS) }

// WatchingSlowForTest reports whether p's slow-task watcher runs.
func WatchingSlowForTest(p *Pool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watchingSlow
}
