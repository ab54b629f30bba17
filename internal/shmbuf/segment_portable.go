//go:build darwin || freebsd || netbsd || openbsd || (linux && offload_portable)

package shmbuf

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Segments off Linux (and on Linux with the offload_portable tag): there
// is no memfd, so a segment is a temporary file, unlinked as soon as it is
// made, mapped shared and passed by descriptor like a memfd. It lives in
// /dev/shm where that exists (memory-backed) and in os.TempDir otherwise
// (on macOS a disk-backed directory: the pages stay in the page cache
// while mapped, but the kernel may write them back to disk).
//
// What the portable path cannot promise: a file cannot be sealed. On Linux
// a segment is sealed against shrinking, so no peer can truncate it under
// another's mapping; here a worker that ftruncates a segment it holds
// turns the supervisor's next read of a Buffer in it into SIGBUS, which
// kills the supervisor. The pool's own worker code never truncates one;
// a task that digs the descriptor out and truncates it can. Adoption
// checks what can be checked: a regular file, unlinked (no one can open
// it by name), at least as long as announced.

// sharedMemory reports whether segments can be sent to another process.
const sharedMemory = true

// createSegment makes an unlinked file of size bytes and maps it shared,
// read-write. It returns the descriptor (kept open so the segment can be
// sent to peers) and the mapping.
func createSegment(size int) (fd int, mem []byte, err error) {
	fd, err = openUnlinked()
	if err != nil {
		return -1, nil, err
	}
	if err = unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("transfer: ftruncate segment to %d bytes: %w", size, err)
	}
	mem, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("transfer: map segment of %d bytes: %w", size, err)
	}
	return fd, mem, nil
}

// segmentDir is where segment files are made: memory-backed /dev/shm if
// the system has it, os.TempDir otherwise.
var segmentDir = func() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}()

// openUnlinked creates a new file only this process can open (0600,
// O_EXCL, a random name) and unlinks it at once: from then on only the
// descriptor, and those it is passed to, reach it. O_CLOEXEC keeps it out
// of processes this one starts.
func openUnlinked() (int, error) {
	var rnd [12]byte
	for range 8 {
		rand.Read(rnd[:])
		name := filepath.Join(segmentDir, "offload-transfer-"+hex.EncodeToString(rnd[:]))
		fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("transfer: create segment file in %s: %w", segmentDir, err)
		}
		if err := unix.Unlink(name); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("transfer: unlink segment file: %w", err)
		}
		return fd, nil
	}
	return -1, fmt.Errorf("transfer: create segment file in %s: no free name", segmentDir)
}

// destroySegment unmaps mem and closes fd.
func destroySegment(fd int, mem []byte) {
	unix.Munmap(mem)
	unix.Close(fd)
}

// mapSegment maps a segment received from a peer. It checks that the
// descriptor is an unlinked regular file at least size bytes long, so that
// no access inside [0, size) can fault unless the peer truncates it later
// (see the top of this file). It leaves fd open.
func mapSegment(fd int, size int) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%w: fstat: %w", ErrBadSegment, err)
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%w: descriptor is not a regular file", ErrBadSegment)
	}
	if st.Nlink != 0 {
		return nil, fmt.Errorf("%w: segment file still has a name (%d links)", ErrBadSegment, st.Nlink)
	}
	if st.Size < int64(size) {
		return nil, fmt.Errorf("%w: segment has %d bytes, %d announced", ErrBadSegment, st.Size, size)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%w: map %d bytes: %w", ErrBadSegment, size, err)
	}
	return mem, nil
}

// mapPeerSegment is mapSegment for a segment that is only borrowed: it
// closes fd in every case, as the mapping alone keeps the memory.
func mapPeerSegment(fd int, size int) ([]byte, error) {
	defer unix.Close(fd)
	return mapSegment(fd, size)
}

// unmapPeerSegment undoes mapPeerSegment.
func unmapPeerSegment(mem []byte) { unix.Munmap(mem) }

// closeFD closes a descriptor the caller gave up and that won't be used.
func closeFD(fd int) { unix.Close(fd) }

// pageSize is the granularity of dedicated segments.
var pageSize = unix.Getpagesize()
