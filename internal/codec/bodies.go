package codec

import (
	"math"
	"sync"
	"sync/atomic"
)

// Frame bodies that the codec encodes into are sized up front (call bodies
// in the parent, result bodies in the worker); the parent's are reused
// once written. Grown by doubling from a small buffer instead, a struct
// input cost about twice its size in garbage and as many bytes copied on
// every call, and even a 44 MB []byte, encoded into one allocation, cost
// the caller GC assists in Submit.

// maxPooledBody is the largest body kept for reuse.
const maxPooledBody = 64 << 20

// Bodies keeps a pool's written call bodies, up to maxPooledBody each, for
// reuse. It is a sync.Pool, which drops what stays unused over two garbage
// collections: a burst of big calls leaves nothing pinned for long. The
// zero value is ready; safe for concurrent use.
type Bodies struct {
	pool sync.Pool // *[]byte of length 0
}

// Get returns an empty slice with room for n bytes: a reused body if the
// one at hand is big enough, else a new one.
func (bs *Bodies) Get(n int) []byte {
	if p, _ := bs.pool.Get().(*[]byte); p != nil && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// Recycle gives b back for reuse. Call it only once nothing reads b any
// more: after the frame holding it is written (WriteFrame copies or
// writes it before it returns).
func (bs *Bodies) Recycle(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledBody {
		return
	}
	b = b[:0]
	bs.pool.Put(&b)
}

// SizeHints guesses how big a task's encoded value will be: from the
// value where that is cheap (a []byte or a string is its length and a
// header), else from the sizes last encoded for the task. Safe for
// concurrent use; it holds one number per registered task name.
type SizeHints struct {
	last sync.Map // task name → *atomic.Uint64: the last two sizes
}

const (
	// minBody is the guess for a task not encoded yet: small calls fit.
	minBody = 64
	// binHeader bounds msgpack's header of a bin or str value.
	binHeader = 5
)

// Guess returns the room to make for v's encoding, with some to spare: a
// value a little bigger than the last one, or a moves trailer appended to
// the body (see peerLink.seal), then fits without copying it all. From
// the task's history it takes the smaller of the last two sizes, so that
// a task whose values alternate between big and small does not make room
// for a big one each time it encodes a small one.
func (h *SizeHints) Guess(task string, v any) int {
	var n int
	switch v := v.(type) {
	case []byte:
		n = binHeader + len(v)
	case string:
		n = binHeader + len(v)
	default:
		p, ok := h.last.Load(task)
		if !ok {
			return minBody
		}
		two := p.(*atomic.Uint64).Load()
		n = int(min(two>>32, two&math.MaxUint32))
	}
	return n + n/32 + minBody
}

// Record notes that task's value encoded to n bytes.
func (h *SizeHints) Record(task string, n int) {
	p, ok := h.last.Load(task)
	if !ok {
		p, _ = h.last.LoadOrStore(task, new(atomic.Uint64))
	}
	size := uint64(min(n, math.MaxUint32))
	last := p.(*atomic.Uint64)
	for {
		two := last.Load()
		if last.CompareAndSwap(two, two<<32|size) {
			return
		}
	}
}
