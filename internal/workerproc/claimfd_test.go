//go:build linux || darwin || freebsd || netbsd || openbsd

package workerproc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A worker refuses an inherited descriptor of the wrong kind, and says
// what most likely went wrong: a supervisor of another build (the Linux
// channel's bulk socket where the portable one has its lifeline pipe).
// One of the right kind is claimed: marked close-on-exec.
func TestClaimFDChecksItsKind(t *testing.T) {
	var pipe [2]int
	require.NoError(t, unix.Pipe(pipe[:]))
	sock, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { closeFDs(append(pipe[:], sock[:]...)) })

	err = claimFD(pipe[0], unix.S_IFSOCK)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a socket")
	assert.Contains(t, err.Error(), "same build as its supervisor")
	err = claimFD(sock[0], unix.S_IFIFO)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a pipe")

	for _, claim := range []struct {
		fd   int
		kind uint32
	}{{pipe[0], unix.S_IFIFO}, {sock[0], unix.S_IFSOCK}} {
		require.NoError(t, claimFD(claim.fd, claim.kind))
		flags, err := unix.FcntlInt(uintptr(claim.fd), unix.F_GETFD, 0)
		require.NoError(t, err)
		assert.NotZero(t, flags&unix.FD_CLOEXEC, "fd %d is close-on-exec once claimed", claim.fd)
	}

	require.Error(t, claimFD(-1, unix.S_IFIFO), "a descriptor that isn't open")
}
