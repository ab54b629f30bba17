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
// arena), and a process maps another's segment only while it holds the
// Buffer in it (see peer): what a worker process can reach of its parent's
// memory is the Buffers its calls carry, not the rest of an arena. Package transfer holds the user's API and its
// contract; the pool, its transports and the codec import this package
// directly.
package shmbuf
