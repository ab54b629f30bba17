// Package transfer decides how values cross a worker boundary: plain values
// are copied (msgpack between processes), while a *Buffer moves, handing its
// memory over to the receiver without a copy.
//
// # Ownership
//
// A [Buffer] has exactly one live handle. Handing it over — as a task's
// input or output, at the top level or nested in structs, slices, arrays,
// maps, pointers or interfaces — detaches the sender's handle (Bytes nil,
// Detached true, a further hand-over fails with [ErrDetached]) and gives the
// receiver a new handle on the same memory. [NewBuffer] allocates one,
// [Move] wraps bytes the caller gives up, [Buffer.Release] frees it.
//
// # In process
//
// [HandOver] is the hand-over within a process: a pointer handoff, zero
// bytes copied, a few nanoseconds for a type that can't hold a Buffer.
// Everything in a task's input or output that isn't a Buffer is shared with
// the caller, as with any value passed to a goroutine; [Copy] makes a deep
// copy for callers who want isolation.
//
// # Between processes
//
// Buffer memory lives in a process-wide arena of shared-memory segments
// (memfd on Linux), each mapped once per process. A [Peer] (one per worker
// connection, on both sides) encodes a Buffer as a 29-byte reference —
// segment, offset, length — in a msgpack extension ([ExtID]); the
// descriptor of a segment travels to a peer once, after which a move of any
// size costs the same few microseconds. Each process allocates from its own
// arena, so results move back the same way. [Check] reports what can't
// cross (channels, funcs, unsafe pointers, detached Buffers) before
// anything is sent.
//
// The pool drives a connection like this (sender S, receiver R):
//
//	S: data, segs, err := peer.Marshal(v)        // or Encode with its own encoder
//	S: send frame{data, metadata of segs, peer.DrainReleases()} + the segs' FDs (SCM_RIGHTS)
//	R: for each received segment: peer.Adopt(id, fd, size)   // takes the fd
//	R: peer.ApplyReleases(frame.releases)
//	R: err := peer.Unmarshal(data, &v)          // refs become Buffers
//	worker, after the task returned and its output was encoded:
//	   ReleaseAll(input)                         // frees what the task kept
//	either side, after the other process is dead and reaped: peer.Close()
//
// Package pool does exactly this for its Subprocess workers: one Peer per
// worker process on each side, the segments and releases in a trailer of
// its call and result frames, Close after the worker is reaped.
//
// Releases travel back piggybacked: a Buffer received from the other side
// and released here is queued on the Peer, and DrainReleases hands the
// queue to the next outgoing frame. Close frees every Buffer the dead side
// still held, so a crashed or killed worker leaks no arena space, no
// descriptor and no mapping.
//
// # Trust
//
// Decoding is safe against a hostile or broken peer: malformed references,
// references outside a segment or to unknown segments, unsealed or short
// descriptors are errors, never panics or out-of-bounds slices. Shared
// memory is not a confidentiality boundary, though: a worker that was sent
// a segment can read all of it, including space other Buffers used before.
package transfer
