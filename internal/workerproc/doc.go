// Package workerproc supervises one killable worker process: start,
// handshake, the framed channel, kill, reap, and the account of how the
// process ended (a *cancel.Exit). Package pool's Subprocess workers are
// built on it; it is internal because nothing else should depend on its
// frames.
//
// The supervisor side is [Start], which re-executes a binary (by default the
// running program) as a worker and returns a [*Process]. The worker side is
// [Attach], called first thing in the worker's main: it returns the [*Conn]
// to the supervisor, over which the worker sends its [Hello] and then serves
// frames until the connection reaches EOF, at which point it must exit.
//
// The channel is passed to the worker as file descriptors 3, 4 and 5, and
// 6 on Linux (never stdin or stdout, which belong to whatever the worker
// prints): a pipe each way for the frames, a unix socket beside them for
// file descriptors (SCM_RIGHTS), which a frame can carry (SOCK_SEQPACKET on
// Linux, SOCK_STREAM on macOS and the BSDs), and on Linux a stream socket
// for bodies of a MiB or more, which a pipe would copy in and out by turns.
// Frames are length-prefixed, with a maximum size; their kinds are opaque
// to this package, except the few at or above [KindReserved]. Everything the worker prints to stdout
// or stderr goes, line by line, to the supervisor's [log/slog] logger.
//
// Processes a worker starts do not outlive it. Each worker runs in a
// process group of its own, and whenever it ends — killed, crashed or
// exited by itself — the supervisor sends SIGKILL to that whole group
// before it reaps the worker (the unreaped worker holds the group's id, so
// the signal cannot reach a group that reused it). If the supervisor dies
// first, the worker learns it — on Linux by SIGTERM (Pdeathsig),
// elsewhere by EOF on a lifeline pipe (fd 6) that only the supervisor
// holds — and [Attach] answers with SIGKILL to its group, itself included.
// What escapes: a process that leaves the group (setpgid or setsid, as
// daemons do); and, when the supervisor dies, on Linux a worker that
// ignores SIGTERM outlives it with its group, while one that did not call
// Attach dies of SIGTERM but leaves its group behind; elsewhere a worker
// that did not call Attach outlives it with its group.
//
// A MemoryLimit (Linux only) counts the worker's RSS, read from
// /proc/PID/statm every MemoryPoll, and, every 100 ms (less often for a
// tree whose sample takes over 10 ms, so that the samples take at most a
// tenth of a core):
//   - its descendants' proportional set size (Pss, from
//     /proc/PID/smaps_rollup), found by walking /proc/PID/task/*/children
//     down the tree (or, on a kernel without CONFIG_PROC_CHILDREN, by
//     reading every process's parent). Pss splits a shared page among
//     the processes that map it, so the pages a forked child shares
//     copy-on-write with the worker count in full once (in the worker's
//     RSS) plus a share (in the child's Pss): the total errs high, by
//     less than what they share, never low. A descendant's RSS, which is
//     at least its Pss and far cheaper to read, is read first; its Pss
//     only when the RSS would break the limit, and always before a kill.
//   - the bytes held by the memfds that the worker and its descendants
//     have open (each counted once), less the shared memory they map,
//     which their RSS counts already: memfd pages show in no RSS until
//     touched through a mapping.
//
// What escapes the count: a descendant whose parent died (it is reparented
// to init or a subreaper, as after a double fork, so the walk no longer
// finds it, though the group kill still reaches it if it stayed in the
// group); one that left the group is counted while its parent lives, but
// the kill does not reach it; a descendant this process may not trace
// (setuid) counts by its RSS, and its memfds are not seen; files written to
// tmpfs or /dev/shm and closed; a memfd that no process of the tree holds
// open (closed while mapped, only the pages touched through a mapping
// count, in the RSS; sent to a process outside the tree, it is that
// process's); unmapped memfd bytes up to the size of the other shared
// memory the tree maps (the subtraction can't tell them apart); kernel
// memory (page tables, socket and pipe buffers); and whatever a descendant
// allocates and frees, or is born and dies with, between two samples.
//
// Worker processes run on Linux, macOS, FreeBSD, NetBSD and OpenBSD;
// elsewhere [Start] and the [Conn] methods return [ErrUnsupported]. The
// non-Linux path (channel_portable.go, parentdeath_portable.go) is built
// on Linux too with the offload_portable build tag, which is how CI tests
// it. Spec.MemoryLimit needs Linux's /proc; Start refuses it elsewhere,
// with an error that matches errors.ErrUnsupported.
package workerproc
