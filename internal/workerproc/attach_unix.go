//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Attach connects a worker process to its supervisor. In a process started
// by [Start] it returns the channel and true; in any other process it
// returns (nil, false, nil) at once, without side effects. Call it once,
// first thing in main (and in TestMain), then send the [Hello] and serve
// frames until ReadFrame returns io.EOF — the supervisor closed the channel
// or died —, and exit then.
//
// An error with true means the process is a worker that cannot serve (its
// parent already died, or descriptors 3 and up are not the channel): exit
// at once.
//
// Attach unsets the worker environment variables (EnvWorker and the rest)
// and marks the channel close-on-exec, so processes the worker starts
// neither think they are workers nor hold the channel open.
//
// Attach also makes the worker take the processes it started down with it
// when its supervisor dies. On Linux, Start has the kernel send the worker
// SIGTERM then, and Attach starts a goroutine that answers SIGTERM, from
// whatever sender, with SIGKILL to the worker's process group, itself
// included. So do not ignore or reset SIGTERM in a worker (signal.Ignore,
// signal.Reset): it would outlive its supervisor, or leave the processes
// it started behind. (signal.Notify for SIGTERM elsewhere in the worker is
// harmless.) Elsewhere Attach's goroutine waits for EOF on a pipe (fd 6)
// that only the supervisor holds open, and then sends the same SIGKILL.
func Attach() (*Conn, bool, error) {
	if os.Getenv(EnvWorker) != "1" {
		return nil, false, nil
	}
	parent, max := os.Getenv(EnvParent), os.Getenv(EnvMaxFrame)
	for _, k := range []string{EnvWorker, EnvParent, EnvMaxFrame, EnvLifeline} {
		os.Unsetenv(k)
	}
	// The supervisor sets Pdeathsig, and Go's fork re-checks the parent
	// after setting it; this catches a parent gone before exec all the same.
	if ppid, err := strconv.Atoi(parent); err != nil || ppid != os.Getppid() {
		return nil, true, fmt.Errorf("workerproc: worker's supervisor (pid %q) is gone (parent is now pid %d)", parent, os.Getppid())
	}
	maxFrame, err := strconv.Atoi(max)
	if err != nil || maxFrame < 0 || maxFrame > MaxFrameLimit {
		return nil, true, fmt.Errorf("workerproc: bad %s=%q", EnvMaxFrame, max)
	}
	for i, fd := range workerFDs {
		if err := claimFD(fd, workerFDKinds[i]); err != nil {
			return nil, true, err
		}
	}
	conn, err := newConn(workerFDs, maxFrame)
	if err != nil {
		return nil, true, err
	}
	// Only the leader of a group of its own, as Start makes it, may kill
	// its whole group: any other group is somebody else's too.
	if err := watchParent(unix.Getpgrp() == os.Getpid()); err != nil {
		conn.Close()
		return nil, true, err
	}
	return conn, true, nil
}

// claimFD checks that the inherited descriptor fd is of kind (S_IFIFO,
// S_IFSOCK) and marks it close-on-exec.
func claimFD(fd int, kind uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("workerproc: worker channel (fd %d): %w", fd, err)
	}
	if uint32(st.Mode)&unix.S_IFMT != kind {
		what := "pipe"
		if kind == unix.S_IFSOCK {
			what = "socket"
		}
		// A supervisor and worker of different builds lay the channel out
		// differently (the bulk socket of Linux against the lifeline pipe
		// of the portable channel), and fail here before any Hello could
		// tell their versions apart.
		return fmt.Errorf("workerproc: worker channel (fd %d) is not a %s (is the worker the same build as its supervisor, with the same offload_portable tag?)", fd, what)
	}
	unix.CloseOnExec(fd)
	return nil
}
