package subproc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// raiseNice sets every thread of this process to its nice value plus n
// (at most MaxNice).
func raiseNice(n int) error { return raiseNiceOf(0, n) }

// raiseNiceOf sets every thread of process pid (0: this one) to the nice
// value of its main thread plus n (at most MaxNice). On Linux a nice
// value is a thread's, and a new thread takes its creator's: once every
// thread has it, every later thread will. A thread created during a pass
// from one not yet reached shows up in the next, so passes repeat until
// one changes nothing.
func raiseNiceOf(pid, n int) error {
	self, err := niceOf(pid)
	if err != nil {
		return err
	}
	want := min(self+n, MaxNice)
	dir := "/proc/self/task"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/task"
	}
	for {
		changed, err := setEveryThread(dir, want)
		if err != nil || !changed {
			return err
		}
	}
}

// setEveryThread sets each thread listed in dir (a /proc/PID/task) to
// nice value want, and says whether any was not at it already.
func setEveryThread(dir string, want int) (changed bool, err error) {
	tasks, err := os.ReadDir(dir)
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
