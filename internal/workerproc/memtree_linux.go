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
//     share: the total errs high, by less than what they share). Pss is
//     never more than RSS, and smaps_rollup walks every page table of the
//     process (~12 ms for 256 MiB resident, against ~6 µs for statm,
//     BenchmarkMemoryReads), so the descendants' RSS is read first, and
//     their Pss only when the RSS figure would break the limit;
//   - the open memfds of the worker and its descendants (each once, by
//     inode), by the bytes they hold, less the shared memory the tree has
//     mapped (RssShmem): a memfd's pages show in no RSS until touched
//     through a mapping, and those are counted already. So an arena the
//     worker maps costs nothing more, and what the subtraction lets
//     through is at most the tree's other mapped shared memory.
//
// The worker's own figure stays its RSS from statm, read every MemoryPoll,
// for the same reason: a counter, where its Pss would be a walk of its
// page tables every 5 ms.

// treeMemory is what a process's tree holds beyond its own RSS.
type treeMemory struct {
	Descendants int   // found and measured
	Resident    int64 // the descendants' RSS, or their Pss if Proportional (bytes)
	// Proportional says Resident is the descendants' Pss, not their RSS
	// (which is at least as much).
	Proportional bool
	Memfd        int64 // open memfds' bytes beyond the tree's mapped shared memory
}

// Total is what counts against a MemoryLimit besides the root's RSS.
func (m treeMemory) Total() int64 { return m.Resident + m.Memfd }

// Exact says that Total is the contract's figure: the descendants' Pss,
// or no descendants at all.
func (m treeMemory) Exact() bool { return m.Proportional || m.Descendants == 0 }

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
// and its descendants. budget is what they may hold before the limit
// breaks: while their RSS fits in it, so does their Pss, which is not
// read; past it, it is. It fails only when pid is gone; a descendant that
// exits meanwhile is left out.
func (s *treeSampler) sample(pid int, budget int64) (treeMemory, error) {
	pids, err := s.descendants(pid, s.pids[:0])
	s.pids = pids
	if err != nil {
		return treeMemory{}, err
	}
	m := treeMemory{Memfd: s.memfdBytes(pid, pids)}
	for _, p := range pids {
		if rss, ok := s.rss(p); ok {
			m.Descendants++
			m.Resident += rss
		}
	}
	if m.Exact() || m.Total() <= budget {
		return m, nil
	}
	m.Descendants, m.Resident, m.Proportional = 0, 0, true
	for _, p := range pids {
		if pss, ok := s.pss(p); ok {
			m.Descendants++
			m.Resident += pss
		}
	}
	return m, nil
}

// memfdBytes is what the memfds open in pid and pids hold beyond the
// shared memory they map.
func (s *treeSampler) memfdBytes(pid int, pids []int) int64 {
	clear(s.memfds)
	s.addMemfds(pid)
	for _, p := range pids {
		s.addMemfds(p)
	}
	if len(s.memfds) == 0 {
		return 0
	}
	var held int64
	for _, n := range s.memfds {
		held += n
	}
	held -= s.statusField(pid, "RssShmem:")
	for _, p := range pids {
		held -= s.statusField(p, "RssShmem:")
	}
	return max(0, held)
}

// pss is pid's proportional set size in bytes. Where smaps_rollup can't be
// read (a kernel before 4.14, or a process this one may not trace, such as
// a setuid one) it falls back on its RSS, which anyone may read.
func (s *treeSampler) pss(pid int) (int64, bool) {
	if b, err := s.read("/proc/" + strconv.Itoa(pid) + "/smaps_rollup"); err == nil {
		if kb, ok := kbField(b, "Pss:"); ok {
			return kb << 10, true
		}
	}
	return s.rss(pid)
}

// rss is pid's resident set size in bytes, from statm.
func (s *treeSampler) rss(pid int) (int64, bool) {
	b, err := s.read(statmPath(pid))
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
