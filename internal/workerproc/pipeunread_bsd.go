//go:build darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"errors"
	"runtime"
)

// pipeUnread fails: on macOS and the BSDs FIONREAD on a pipe's write end
// counts what could be read from that end, not what the reader left, so
// nothing tells whether a dead worker read its last frame. Conn.Unread's
// error makes the pool count that frame as taken: a call written to a
// worker that died before reading it fails with ErrWorkerCrashed here,
// where on Linux it would go to another worker. Never twice, either way.
func pipeUnread(int) (int, error) {
	return 0, errors.New("workerproc: unread bytes of a pipe are not known on " + runtime.GOOS)
}
