package transfer

import "github.com/offloadgo/offload/internal/shmbuf"

// ArenaStats describes the process's shared-memory arena.
type ArenaStats struct {
	// Segments is the number of segments mapped.
	Segments int
	// Mapped is their total size in bytes.
	Mapped int64
	// InUse is the space held by live Buffers and by Buffers lent to
	// peers, in bytes (rounded up to the allocation alignment).
	InUse int64
}

// Stats reports the process arena's size and use. It creates nothing: a
// process that never allocated a Buffer reports zeroes. Safe for concurrent
// use.
func Stats() ArenaStats {
	segments, mapped, inUse := shmbuf.ArenaUsage()
	return ArenaStats{Segments: segments, Mapped: mapped, InUse: inUse}
}
