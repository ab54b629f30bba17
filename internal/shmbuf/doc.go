// Package shmbuf is the machinery behind transfer.Buffer: the handle that
// owns a Buffer's memory, the shared-memory arena that memory comes from,
// and the Peers that move Buffers between processes (over shared memory)
// or copy them over a network, with the wire references, the walkers that
// find Buffers in a task's values, and the checks that keep a hostile
// peer's bytes from panicking or exhausting memory.
//
// Moving a Buffer means giving its memory to a new handle and detaching
// the old one: MoveAt within a process, Peer.Encode and Peer.Decode
// between processes. Each Buffer's memory is a segment of its own (see
// arena), a worker maps its parent's segment only while it holds the
// Buffer in it, and a worker gives the segments it sends to its parent
// for good (see peer and Side): what a worker process can reach is the
// Buffers its calls carry now, not the rest of an arena nor what it
// returned. Package transfer holds the user's API and its contract; the
// pool, its transports and the codec import this package directly.
package shmbuf
