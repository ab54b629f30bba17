// Package cancel stops running work: the causes and errors of cancellation,
// and the supervisor of one killable worker process (start, handshake, kill,
// reap, and an account of how it ended).
package cancel
