package pool_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// scribbled is what scribbleShared reached in its worker process.
type scribbled struct {
	Mappings, Descriptors int
	Bytes                 int64
}

// scribbleShared is a task gone rogue: it writes 0xEE over every
// shared-memory mapping of Buffer memory it finds in /proc/self/maps (its
// own input's and whatever else is mapped; through /proc/self/mem, as a
// write past its Buffer's end would), and over every Buffer segment it
// holds a descriptor of, mapped anew. It returns what it reached.
var scribbleShared = pool.Register("test.scribble-shared", func(_ context.Context, _ *transfer.Buffer) (scribbled, error) {
	var s scribbled
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return s, err
	}
	defer maps.Close()
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return s, err
	}
	defer mem.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.Contains(f[5], "offload-transfer") || !strings.HasPrefix(f[1], "rw") {
			continue
		}
		var lo, hi int64
		if _, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); err != nil {
			return s, err
		}
		if _, err := mem.WriteAt(bytes.Repeat([]byte{0xEE}, int(hi-lo)), lo); err != nil {
			return s, err
		}
		s.Mappings++
		s.Bytes += int64(hi - lo)
	}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		target, err := os.Readlink(fd)
		if err != nil || !strings.Contains(target, "offload-transfer") {
			continue
		}
		f, err := os.OpenFile(fd, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if st, err := f.Stat(); err == nil && st.Size() > 0 {
			if mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
				clearTo(mem)
				s.Descriptors++
				s.Bytes += int64(len(mem))
				unix.Munmap(mem)
			}
		}
		f.Close()
	}
	return s, sc.Err()
})

func clearTo(b []byte) {
	for i := range b {
		b[i] = 0xEE
	}
}

// overwritten counts the bytes of b that are no longer seed+i.
func overwritten(b []byte, seed byte) int {
	n := 0
	for i, c := range b {
		if c != seed+byte(i) {
			n++
		}
	}
	return n
}

// madeOverwritten counts the bytes of b, made by makeBuffer, that are no
// longer i%251.
func madeOverwritten(b []byte) int {
	n := 0
	for i, c := range b {
		if c != byte(i%251) {
			n++
		}
	}
	return n
}

// TestSubprocessTaskReachesOnlyItsBuffers: a task that writes over every
// piece of Buffer memory its process can reach changes neither a Buffer
// the caller kept and never sent, nor one an earlier call carried and
// gave back, nor one an earlier task in the same process made and
// returned (issue 35, item 5).
func TestSubprocessTaskReachesOnlyItsBuffers(t *testing.T) {
	p, _ := newProcPool(t, pool.Options{Workers: 1})
	ctx := testCtx(t)

	kept := testkit.CountingBuffer(t, transfer.NewBuffer, 4096, 3)
	defer kept.Release()
	returned, err := pool.Run(ctx, p, echoBuffer, testkit.CountingBuffer(t, transfer.NewBuffer, 4096, 5))
	require.NoError(t, err)
	defer returned.Release()
	made, err := pool.Run(ctx, p, makeBuffer, 4096)
	require.NoError(t, err)
	defer made.Release()

	reach, err := pool.Run(ctx, p, scribbleShared, testkit.CountingBuffer(t, transfer.NewBuffer, 4096, 7))
	require.NoError(t, err)
	t.Logf("the task wrote %d bytes over %d mappings and %d descriptors", reach.Bytes, reach.Mappings, reach.Descriptors)
	require.Positive(t, reach.Mappings, "the task found no mapping of its own input")

	assert.Zero(t, overwritten(kept.Bytes(), 3), "bytes of a Buffer the caller kept and never sent (of %d)", kept.Len())
	assert.Zero(t, overwritten(returned.Bytes(), 5), "bytes of a Buffer an earlier call gave back (of %d)", returned.Len())
	assert.Zero(t, madeOverwritten(made.Bytes()), "bytes of a Buffer an earlier task made and the caller kept (of %d)", made.Len())
}
