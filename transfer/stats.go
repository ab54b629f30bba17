package transfer

import "github.com/offloadgo/offload/internal/shmbuf"

// ArenaStats describes the process's shared-memory arena.
type ArenaStats struct {
	// Segments is the number of segments mapped: one per live Buffer,
	// plus those kept for reuse.
	Segments int
	// Mapped is their total size in bytes.
	Mapped int64
	// InUse is the size of the segments held by live Buffers and by
	// Buffers lent to peers, in bytes (each a power of two of at least
	// a page).
	InUse int64
}

// Stats reports the process arena's size and use. It creates nothing: a
// process that never allocated a Buffer reports zeroes. Safe for concurrent
// use.
func Stats() ArenaStats {
	segments, mapped, inUse := shmbuf.ArenaUsage()
	return ArenaStats{Segments: segments, Mapped: mapped, InUse: inUse}
}
