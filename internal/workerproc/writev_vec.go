//go:build darwin || openbsd || (linux && offload_portable)

package workerproc

import "golang.org/x/sys/unix"

func writev(fd int, iov [][]byte) (int, error) { return unix.Writev(fd, iov) }
