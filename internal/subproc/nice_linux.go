package subproc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// raiseNice sets every thread of this process to its nice value plus n
// (at most MaxNice). On Linux a nice value is a thread's, and a new thread
// takes its creator's: once every thread has it, every later thread will.
// A thread the runtime creates during a pass from one not yet reached
// shows up in the next, so passes repeat until one changes nothing.
func raiseNice(n int) error {
	self, err := niceOf(0)
	if err != nil {
		return err
	}
	want := min(self+n, MaxNice)
	for {
		changed, err := setEveryThread(want)
		if err != nil || !changed {
			return err
		}
	}
}

// setEveryThread sets each of this process's threads to nice value want,
// and says whether any was not at it already.
func setEveryThread(want int) (changed bool, err error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false, err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		nice, err := niceOf(tid)
		if err == unix.ESRCH {
			continue // the thread has exited
		}
		if err != nil {
			return false, err
		}
		if nice == want {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, want); err != nil && err != unix.ESRCH {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

// niceOf returns thread tid's nice value (0: the calling thread's). The
// raw system call, which x/sys makes, returns 20 - nice, so that no nice
// value is -1, an error's return.
func niceOf(tid int) (int, error) {
	p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return 0, err
	}
	return 20 - p, nil
}
