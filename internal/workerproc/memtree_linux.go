package workerproc

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What a MemoryLimit counts beyond the worker's own RSS (the doc of
// Spec.MemoryLimit states the contract):
//
//   - each descendant's proportional set size (Pss, /proc/PID/smaps_rollup):
//     a page it shares with others counts for its share, so the pages a
//     forked child shares copy-on-write with the worker are not counted
//     twice in full (the worker's RSS has them whole, the child's Pss a
//     share: the total errs high, by less than what they share);
//   - the open memfds of the worker and its descendants (each once, by
//     inode), by the bytes they hold, less the shared memory the tree has
//     mapped (RssShmem): a memfd's pages show in no RSS unless mapped, and
//     what is mapped is counted already. So an arena the worker maps costs
//     nothing more, and what the subtraction lets through is at most the
//     tree's other mapped shared memory.
//
// The worker's own figure stays its RSS from statm, read every MemoryPoll:
// a counter, one pread, where smaps_rollup walks every page table of the
// process (its cost grows with its size), which is affordable every
// treePoll for descendants, not every 5 ms for the worker.

// treeMemory is what a process's tree holds beyond its own RSS.
type treeMemory struct {
	Descendants int   // found and measured
	PSS         int64 // the descendants' Pss, summed (bytes)
	Memfd       int64 // open memfds' bytes beyond the tree's mapped shared memory
}

// Total is what counts against a MemoryLimit besides the root's RSS.
func (m treeMemory) Total() int64 { return m.PSS + m.Memfd }

// treeSampler measures a process tree, reusing its buffers between
// samples. Not safe for concurrent use.
type treeSampler struct {
	buf     []byte
	pids    []int
	seen    map[int]struct{}
	parents map[int]int
	memfds  map[memfdID]int64
	scan    bool // no children files: find descendants by scanning /proc
}

type memfdID struct{ dev, ino uint64 }

func newTreeSampler() *treeSampler {
	return &treeSampler{
		buf:     make([]byte, 4096),
		seen:    make(map[int]struct{}),
		parents: make(map[int]int),
		memfds:  make(map[memfdID]int64),
	}
}

// sample measures what pid's descendants hold, and the open memfds of pid
// and its descendants. It fails only when pid is gone; a descendant that
// exits meanwhile is left out.
func (s *treeSampler) sample(pid int) (treeMemory, error) {
	pids, err := s.descendants(pid, s.pids[:0])
	s.pids = pids
	if err != nil {
		return treeMemory{}, err
	}
	var m treeMemory
	for _, p := range pids {
		if pss, ok := s.pss(p); ok {
			m.Descendants++
			m.PSS += pss
		}
	}
	clear(s.memfds)
	s.addMemfds(pid)
	for _, p := range pids {
		s.addMemfds(p)
	}
	if len(s.memfds) > 0 {
		var held int64
		for _, n := range s.memfds {
			held += n
		}
		held -= s.statusField(pid, "RssShmem:")
		for _, p := range pids {
			held -= s.statusField(p, "RssShmem:")
		}
		m.Memfd = max(0, held)
	}
	return m, nil
}

// pss is pid's proportional set size in bytes. Where smaps_rollup can't be
// read (a kernel before 4.14, or a process this one may not trace, such as
// a setuid one) it falls back on the RSS in statm, which anyone may read.
func (s *treeSampler) pss(pid int) (int64, bool) {
	proc := "/proc/" + strconv.Itoa(pid)
	if b, err := s.read(proc + "/smaps_rollup"); err == nil {
		if kb, ok := kbField(b, "Pss:"); ok {
			return kb << 10, true
		}
	}
	b, err := s.read(proc + "/statm")
	if err != nil {
		return 0, false
	}
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	return pages * int64(unix.Getpagesize()), err == nil
}

// addMemfds records the memfds pid holds open with the bytes they hold
// (allocated blocks, so a sparse one counts what was written). A process
// whose descriptors this one may not read is skipped.
func (s *treeSampler) addMemfds(pid int) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := s.readNames(dir)
	if err != nil {
		return
	}
	for _, fd := range fds {
		n, err := unix.Readlink(dir+fd, s.buf)
		if err != nil || !strings.HasPrefix(string(s.buf[:n]), "/memfd:") {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(dir+fd, &st) == nil {
			s.memfds[memfdID{uint64(st.Dev), st.Ino}] = st.Blocks * 512
		}
	}
}

// statusField reads a "kB" line of /proc/PID/status in bytes, 0 if none.
func (s *treeSampler) statusField(pid int, key string) int64 {
	b, err := s.read("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	kb, _ := kbField(b, key)
	return kb << 10
}

// kbField finds the line "key   N kB" in b and returns N.
func kbField(b []byte, key string) (int64, bool) {
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(string(fields[0]), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// read reads a whole /proc file into s.buf (grown as needed): open, read,
// close, with no poller registration or stat on the way.
func (s *treeSampler) read(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
		m, err := unix.Read(fd, s.buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return s.buf[:n], nil
		}
		n += m
	}
}
