package workerproc

import "golang.org/x/sys/unix"

// pipeUnread counts the bytes written into the pipe whose write end is
// wfd that its reader has not read: Linux answers FIONREAD on either end.
func pipeUnread(wfd int) (int, error) { return unix.IoctlGetInt(wfd, unix.TIOCINQ) }
