package testkit

import (
	"os"

	"golang.org/x/sys/unix"
)

// holdMemfd writes mib MiB to a new memfd, never mapped, and returns it
// open: memory that no process's RSS shows.
func holdMemfd(mib int) (*os.File, error) {
	fd, err := unix.MemfdCreate("offload-test-hog", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "memfd:offload-test-hog")
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 1
	}
	for range mib {
		if _, err := f.Write(chunk); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}
