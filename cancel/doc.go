// Package cancel is the vocabulary of stopped work that callers match on.
//
// [WithCause] builds an error that matches two things with errors.Is: what
// happened and why. Package pool uses it so that a task stopped because its
// caller's deadline passed matches both pool.ErrTerminated and
// context.DeadlineExceeded; use it the same way for errors of your own.
//
// [Exit] is the account of how a worker process ended: its exit status or
// signal, whether the pool killed it and why ([KillReason]: a
// terminate, the memory limit), the tail of its stderr and the Go runtime's
// crash headline. A Subprocess pool's pool.ErrWorkerCrashed error carries
// one, for callers that want more than the message (a Remote pool's does
// not: the process ended on another machine, and the message gives the
// node's account):
//
//	var exit *cancel.Exit
//	if errors.As(err, &exit) && exit.Killed == cancel.KilledByMemoryLimit {
//		// the task needs more memory than the pool allows
//	}
//
// Everything here is safe for concurrent use; an Exit is read-only.
package cancel
