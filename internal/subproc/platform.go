package subproc

import (
	"errors"
	"fmt"
)

// PlatformSupport says whether Subprocess workers run on goos: nil on
// Linux, macOS, FreeBSD, NetBSD and OpenBSD, otherwise an error for New
// that names the platform, says what to use instead, and wraps
// errors.ErrUnsupported so callers can match it without naming an
// internal package. It takes goos rather than reading runtime.GOOS so
// that every platform's answer is tested on Linux.
//
// Linux workers use Linux's pieces (Pdeathsig, memfd segments sealed
// against shrinking, SOCK_SEQPACKET, eventfd); the other Unixes use
// portable ones (a lifeline pipe whose EOF tells the worker its supervisor
// died, unlinked files for segments, a stream socket beside the frame
// pipes), which Linux CI runs too, built with the offload_portable tag.
// Windows lacks process groups and descriptor passing altogether.
func PlatformSupport(goos string) error {
	switch goos {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd":
		return nil
	case "windows":
		return fmt.Errorf("pool: Isolation Subprocess: worker processes are not supported on windows "+
			"(they rely on Unix process groups and file-descriptor passing); use InProcess, or Remote nodes: %w", errors.ErrUnsupported)
	default:
		return fmt.Errorf("pool: Isolation Subprocess is not supported on %s (it runs on Linux, macOS, FreeBSD, NetBSD and OpenBSD): "+
			"develop with InProcess (same API, same tasks) or Remote nodes: %w", goos, errors.ErrUnsupported)
	}
}

// MemoryLimitSupport says whether SubprocessOptions.MemoryLimit can be
// enforced on goos: only Linux can sample the memory of a worker and its
// descendants (from /proc) without cgo. Elsewhere New fails with this error rather than run
// workers with no limit; like PlatformSupport's, it names the platform
// and wraps errors.ErrUnsupported.
func MemoryLimitSupport(goos string) error {
	if goos == "linux" {
		return nil
	}
	return fmt.Errorf("pool: SubprocessOptions.MemoryLimit is not supported on %s: it is enforced by sampling the memory of each worker and its descendants, "+
		"which only Linux gives without cgo; leave it 0 there (GOMEMLIMIT in the environment still steers the workers' collector): %w",
		goos, errors.ErrUnsupported)
}
