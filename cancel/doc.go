// Package cancel stops running work: the causes and errors of cancellation,
// and the supervisor of one killable worker process (start, handshake, kill,
// reap, and an account of how it ended).
//
// The supervisor side is [Start], which re-executes a binary (by default the
// running program) as a worker and returns a [*Process]. The worker side is
// [Attach], called first thing in the worker's main: it returns the [*Conn]
// to the supervisor, over which the worker sends its [Hello] and then serves
// frames until the connection reaches EOF, at which point it must exit.
//
// The channel is passed to the worker as file descriptors 3, 4 and 5 (never
// stdin or stdout, which belong to whatever the worker prints): a pipe each
// way for the frames, and a unix socket beside them for file descriptors
// (SCM_RIGHTS), which a frame can carry. Frames are length-prefixed, with a
// maximum size; their kinds are opaque to this package, except the few at
// or above [KindReserved]. Everything the worker prints to stdout
// or stderr goes, line by line, to the supervisor's [log/slog] logger.
//
// Worker processes are supported on Linux only; elsewhere [Start] and the
// [Conn] methods return [ErrUnsupported].
package cancel
