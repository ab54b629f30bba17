//go:build !unix

package cancel

import "syscall"

func signalName(s syscall.Signal) string { return s.String() }
