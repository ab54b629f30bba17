//go:build linux && !offload_portable

package shmbuf

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// sharedMemory reports whether segments are memfd mappings that can be sent
// to another process.
const sharedMemory = true

// requiredSeals are set on every segment the arena creates and demanded of
// every segment a peer adopts: a segment that could shrink under its mapping
// would turn a read of a Buffer into SIGBUS, so a hostile or buggy peer must
// not be able to truncate it.
const requiredSeals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// createSegment makes a sealed memfd of size bytes and maps it shared,
// read-write. It returns the descriptor (kept open so the segment can be
// sent to peers) and the mapping.
func createSegment(size int) (fd int, mem []byte, err error) {
	fd, err = unix.MemfdCreate("offload-transfer", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, nil, fmt.Errorf("transfer: memfd_create: %w", err)
	}
	if err = unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("transfer: ftruncate segment to %d bytes: %w", size, err)
	}
	if _, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, requiredSeals); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("transfer: seal segment: %w", err)
	}
	mem, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("transfer: map segment of %d bytes: %w", size, err)
	}
	return fd, mem, nil
}

// destroySegment unmaps mem and closes fd.
func destroySegment(fd int, mem []byte) {
	unix.Munmap(mem)
	unix.Close(fd)
}

// mapSegment maps a segment received from a peer. It checks that the
// descriptor is a memfd sealed against shrinking and at least size bytes
// long, so that no access inside [0, size) can fault. It leaves fd open.
func mapSegment(fd int, size int) ([]byte, error) {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: descriptor is not a sealable memfd: %w", ErrBadSegment, err)
	}
	if seals&unix.F_SEAL_SHRINK == 0 {
		return nil, fmt.Errorf("%w: segment is not sealed against shrinking", ErrBadSegment)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%w: fstat: %w", ErrBadSegment, err)
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
