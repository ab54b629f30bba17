package workerproc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/offloadgo/offload/cancel"
)

// Linux samples a worker's RSS from /proc/PID/statm, and its descendants'
// memory and open memfds from the rest of /proc (memtree_linux.go), with or
// without the offload_portable tag (the tag swaps the channel, not the
// kernel).

// memoryLimitSupport says whether Spec.MemoryLimit can be enforced here.
func memoryLimitSupport() error { return nil }

// RSS samples the worker's resident memory in bytes (from /proc); it fails
// once the worker has exited.
func (p *Process) RSS() (int64, error) {
	f, err := os.Open(statmPath(p.PID()))
	if err != nil {
		return 0, fmt.Errorf("workerproc: worker %d rss: %w", p.ID(), err)
	}
	defer f.Close()
	return readRSS(f, make([]byte, 128))
}

// treePoll is how often watchMemory measures the worker's descendants and
// open memfds (a walk of /proc, see memtree_linux.go), against MemoryPoll
// for the worker's own RSS; treeSpacing stretches it for a tree whose
// sample is costly (many descendants, or large ones past the limit by
// their RSS, whose Pss is read), so that the samples take at most a tenth
// of a core.
const (
	treePoll    = 100 * time.Millisecond
	treeSpacing = 10
)

// treeInterval is the wait after a tree sample that took took.
func treeInterval(took time.Duration) time.Duration { return max(treePoll, treeSpacing*took) }

// watchMemory kills the worker when its RSS, plus what its descendants and
// open memfds hold (treeMemory, as of the last tree sample), exceeds the
// limit. It keeps /proc/PID/statm open and re-reads it: one pread per
// sample.
func (p *Process) watchMemory() {
	f, err := os.Open(statmPath(p.PID()))
	if err != nil {
		p.log.Warn("workerproc: cannot watch worker memory", "err", err)
		return
	}
	defer f.Close()
	tick := time.NewTicker(p.spec.MemoryPoll)
	defer tick.Stop()
	buf := make([]byte, 128)
	tree := newTreeSampler()
	var others treeMemory
	var nextTree time.Time
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		rss, err := readRSS(f, buf)
		if err != nil {
			return // exited: the reaper takes it from here
		}
		budget := p.spec.MemoryLimit - rss
		// Between two tree samples the last one stands; one whose
		// descendants' figure is their RSS, an upper bound, is taken
		// again, Pss and all, before it can kill.
		if now := time.Now(); !now.Before(nextTree) || (others.Total() > budget && !others.Exact()) {
			if m, err := tree.sample(p.PID(), budget); err == nil {
				others = m
			}
			nextTree = now.Add(treeInterval(time.Since(now)))
		}
		if others.Total() > budget {
			total := rss + others.Total()
			p.killedRSS.Store(total)
			p.kill(cancel.KilledByMemoryLimit)
			p.log.Warn("workerproc: worker over its memory limit, killed", "limit", p.spec.MemoryLimit, "total", total,
				"rss", rss, "descendants", others.Descendants, "descendants_pss", others.Resident, "memfd", others.Memfd)
			return
		}
	}
}

func statmPath(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/statm" }

// readRSS parses the second field of statm: resident pages.
func readRSS(f *os.File, buf []byte) (int64, error) {
	n, err := f.ReadAt(buf, 0)
	if n == 0 {
		return 0, fmt.Errorf("workerproc: read %s: %w", f.Name(), err)
	}
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0, fmt.Errorf("workerproc: malformed %s", f.Name())
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("workerproc: malformed %s: %w", f.Name(), err)
	}
	return pages * int64(os.Getpagesize()), nil
}
