package transfer

import "github.com/offloadgo/offload/internal/shmbuf"

// Copy returns a deep copy of v, for callers who want a task's input or
// output isolated from their own data in process (a hand-over shares
// everything that isn't a Buffer). Pointers, slices, maps and interfaces
// reached through exported fields are duplicated (pointer cycles and shared
// pointers are preserved); a Buffer is duplicated into a new Buffer with a
// copy of its bytes, the original staying live. Channels, funcs, strings
// and unexported fields are shared, since they can't or needn't be copied.
//
// Copy fails with ErrDetached (v untouched, nothing allocated kept) for a
// detached Buffer, or with NewBuffer's error. A type that holds no
// references is returned as is. Safe for concurrent use as long as nobody
// writes v meanwhile.
func Copy[T any](v T) (T, error) { return shmbuf.Copy(v) }
