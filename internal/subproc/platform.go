package subproc

import (
	"errors"
	"fmt"
)

// PlatformSupport says whether Subprocess workers run on goos: nil on
// Linux, otherwise an error for New that names the platform, says what to
// use instead, and wraps errors.ErrUnsupported so callers can match it
// without naming an internal package. It takes goos rather than reading
// runtime.GOOS so that every platform's answer is tested on Linux.
//
// Workers need, today, Linux's pieces: Pdeathsig (the worker dies with its
// supervisor), memfd segments for moved Buffers, SOCK_SEQPACKET for the
// descriptors beside the frames, and /proc for MemoryLimit's RSS samples.
// The other Unixes have portable equivalents (EOF on the channel, shm_open,
// a framed stream socket, their own RSS calls) that are not built yet;
// Windows lacks process groups and descriptor passing altogether.
func PlatformSupport(goos string) error {
	switch goos {
	case "linux":
		return nil
	case "windows":
		return fmt.Errorf("pool: Isolation Subprocess: worker processes are not supported on windows "+
			"(they rely on Unix process groups and file-descriptor passing); use InProcess, or Remote nodes: %w", errors.ErrUnsupported)
	default:
		return fmt.Errorf("pool: Isolation Subprocess needs Linux; it is not supported on %s yet: "+
			"develop with InProcess (same API, same tasks) or Remote nodes, and run Subprocess on Linux: %w", goos, errors.ErrUnsupported)
	}
}
