//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package shmbuf

import (
	"fmt"
	"os"
)

// sharedMemory reports whether segments are memfd mappings that can be sent
// to another process. Elsewhere they are plain heap memory: Buffers still
// move between goroutines, but a Peer can't send them.
const sharedMemory = false

func createSegment(size int) (fd int, mem []byte, err error) {
	return -1, make([]byte, size), nil
}

func destroySegment(fd int, mem []byte) {}

func mapSegment(fd int, size int) ([]byte, error) {
	return nil, fmt.Errorf("%w: %w", ErrBadSegment, ErrUnsupported)
}

func mapPeerSegment(fd int, size int) ([]byte, error) {
	closeFD(fd)
	return nil, fmt.Errorf("%w: %w", ErrBadSegment, ErrUnsupported)
}

func unmapPeerSegment(mem []byte) {}

func closeFD(fd int) {
	if fd >= 0 {
		os.NewFile(uintptr(fd), "segment").Close()
	}
}

var pageSize = os.Getpagesize()
