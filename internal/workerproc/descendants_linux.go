package workerproc

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// A process's descendants are found through the children files of each of
// its threads (/proc/PID/task/TID/children, which lists the children that
// thread forked), walked down the tree: the cost grows with the number of
// descendants and their threads, not with the number of processes on the
// host. The files need CONFIG_PROC_CHILDREN (which kernels built for
// checkpoint/restore, CRIU, have); without it descendantsByScan reads
// every process's parent from /proc/*/stat instead, which costs a read per
// process on the host. Either way what the walk finds is the tree of parents as it is:
// a descendant whose parent died was reparented (to init or a subreaper)
// and is no longer found, even while it stays in the worker's process
// group.

// errNoChildrenFiles says the kernel has no /proc/PID/task/TID/children.
var errNoChildrenFiles = errors.New("workerproc: no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)")

// descendants appends the pids of pid's descendants to out and returns it.
// It fails only when pid itself can't be read (gone); descendants that
// exit during the walk are skipped.
func (s *treeSampler) descendants(pid int, out []int) ([]int, error) {
	if s.scan {
		return s.descendantsByScan(pid, out)
	}
	start := len(out)
	out, err := s.children(pid, out, true)
	if errors.Is(err, errNoChildrenFiles) {
		s.scan = true
		return s.descendantsByScan(pid, out[:start])
	}
	if err != nil {
		return out, err
	}
	// Breadth-first: out[start:] grows while it is walked. A pid met
	// twice (reused mid-walk) is kept and walked once, so the walk ends.
	seen := s.seen
	clear(seen)
	seen[pid] = struct{}{}
	kept := start
	for i := start; i < len(out); i++ {
		p := out[i]
		if _, dup := seen[p]; dup {
			continue
		}
		seen[p] = struct{}{}
		out[kept] = p
		kept++
		out, _ = s.children(p, out, false)
	}
	return out[:kept], nil
}

// children appends the children of every thread of pid. root says pid is
// the walk's root, whose absence is an error and whose threads tell
// whether the kernel has children files at all.
func (s *treeSampler) children(pid int, out []int, root bool) ([]int, error) {
	taskDir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := s.readNames(taskDir)
	if err != nil {
		return out, err
	}
	for _, tid := range tids {
		b, err := s.read(taskDir + "/" + tid + "/children")
		if err != nil {
			if root && errors.Is(err, fs.ErrNotExist) && exists(taskDir+"/"+tid) {
				return out, errNoChildrenFiles
			}
			continue // the thread ended
		}
		out = appendPIDs(out, b)
	}
	return out, nil
}

// descendantsByScan finds pid's descendants from every process's parent
// (the 4th field of /proc/PID/stat, after the parenthesised command).
func (s *treeSampler) descendantsByScan(pid int, out []int) ([]int, error) {
	if !exists("/proc/" + strconv.Itoa(pid)) {
		return out, fs.ErrNotExist
	}
	names, err := s.readNames("/proc")
	if err != nil {
		return out, err
	}
	parent := s.parents
	clear(parent)
	for _, name := range names {
		p, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if b, err := s.read("/proc/" + name + "/stat"); err == nil {
			if ppid, ok := statParent(b); ok {
				parent[p] = ppid
			}
		}
	}
	for p := range parent {
		// Up the chain to pid, or to init or the top; bounded in case a
		// reused pid made a loop.
		for q, hops := parent[p], 0; q > 1 && hops < len(parent); q, hops = parent[q], hops+1 {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

// statParent reads the parent pid from the text of /proc/PID/stat.
func statParent(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(stat[i+1:]) // state, ppid, ...
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	return ppid, err == nil
}

// appendPIDs appends the space-separated pids of a children file.
func appendPIDs(out []int, b []byte) []int {
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

func exists(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil
}

// readNames lists a directory's entries.
func (s *treeSampler) readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
