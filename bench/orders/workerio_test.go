package orders

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// workerIO is, per child process of this one (the Subprocess pool's
// workers), the bytes it has read and written through system calls so
// far: rchar + wchar of /proc/PID/io. Frames to and from a worker go
// through its pipes with read and write, so the growth of this count over
// a run is what crossed the process boundary; memory mapped from a shared
// segment is not read or written, and does not count.
func workerIO() (map[int]int64, error) {
	lists, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		return nil, err
	}
	counts := map[int]int64{}
	for _, list := range lists {
		data, err := os.ReadFile(list)
		if err != nil {
			continue // the thread exited between the glob and the read
		}
		for _, field := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				return nil, fmt.Errorf("orders: %s: %w", list, err)
			}
			n, err := ioChars(pid)
			if err != nil {
				return nil, err
			}
			counts[pid] = n
		}
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("orders: no child processes under /proc/self/task/*/children")
	}
	return counts, nil
}

// ioChars returns rchar + wchar from /proc/pid/io.
func ioChars(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, fmt.Errorf("orders: worker I/O counts: %w", err)
	}
	var total int64
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok || (key != "rchar" && key != "wchar") {
			continue
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("orders: /proc/%d/io: %q: %w", pid, sc.Text(), err)
		}
		total += n
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("orders: /proc/%d/io has no rchar/wchar", pid)
	}
	return total, nil
}

// ioGrowth is how much the counts grew from before to after, over the
// workers present in both: a worker that died or started in between
// makes the count meaningless, so it is an error.
func ioGrowth(before, after map[int]int64) (int64, error) {
	var grown int64
	for pid, n := range after {
		was, ok := before[pid]
		if !ok {
			return 0, fmt.Errorf("orders: worker %d started during the run", pid)
		}
		grown += n - was
	}
	if len(after) != len(before) {
		return 0, fmt.Errorf("orders: %d workers before the run, %d after", len(before), len(after))
	}
	return grown, nil
}
