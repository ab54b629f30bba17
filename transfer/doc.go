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
// [Move] wraps bytes the caller gives up, [Buffer.Release] frees it. A
// task owns its input Buffers until it returns: those it neither releases
// nor returns are released for it then.
//
// # In process
//
// The hand-over within a process is a pointer handoff: zero bytes copied,
// a few nanoseconds for a type that can't hold a Buffer (decided once per
// type). Everything in a task's input or output that isn't a Buffer is
// shared with the caller, as with any value passed to a goroutine; [Copy]
// makes a deep copy for callers who want isolation.
//
// # Between processes
//
// Each Buffer's memory is a shared-memory segment of its own (a memfd on
// Linux, an unlinked file elsewhere), sized to a power of two of at least
// a page, from a process-wide arena that keeps freed segments mapped for
// reuse ([Stats] reports its size and use). A Buffer sent to a worker
// process travels as a 29-byte reference with its segment's descriptor
// beside it: the worker maps that segment, and only that one, while it
// holds the Buffer, and unmaps it when it releases the Buffer or sends it
// back. So a task reaches the Buffers its call carries and no other
// Buffer the caller made, however it writes past their ends; a Buffer
// moved to a worker and back is the caller's own memory again, not a
// copy. A move of any size costs the same few tens of microseconds (a
// mapping made and undone); a call moves at most 128 Buffers. A worker
// process allocates from an arena of its own, and gives away the segment
// of a Buffer it returns: it unmaps it and closes its descriptor as the
// result is sent, and the caller's arena takes it over. So a Buffer a
// task made is the caller's like any other once it arrives, out of reach
// of that worker's later tasks; the price is that a worker's output
// Buffer is a fresh segment each time, its pages faulted in as the task
// writes them (BenchmarkWorkerMadeBuffer in bench: a call returning 44 MiB
// takes about 50 ms where a reused segment takes 2.5 ms; 1 MiB 1.1 ms
// against 0.11). Memory a worker released comes back with its next
// message. A worker process that dies takes none of the caller's memory
// with it: what it held is freed once it is reaped. A value that can't
// cross — a channel, a func, an unsafe.Pointer, a Buffer held by value or
// reachable twice, a detached Buffer — fails with [ErrNotTransferable]
// before anything is sent.
//
// # Over a network
//
// A Remote pool's worker nodes (package natsremote) share no memory with
// the caller, so there a Buffer crosses by copy: its bytes go inline in
// the message, the sender's handle is detached at admission as for a move
// and its memory released once the call is sent, and the receiver gets a
// new Buffer over ordinary memory. The connection's maximum payload counts
// the Buffer's whole length.
//
// Decoding is safe against a hostile or broken worker: malformed
// references, references outside a segment or to unknown segments are
// errors, never panics or out-of-bounds slices. What the segments don't
// stop: a task that deliberately keeps a mapping or a descriptor of a
// Buffer past giving it back (mremap, dup) reaches that Buffer, or
// whatever Buffer reuses its segment; and, since a worker runs as the
// caller's user, a task can open the caller's descriptors through
// /proc/<pid>/fd. Isolating code that attacks on
// purpose takes the operating system's means (another user, a sandbox).
package transfer
