package shmbuf

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/sys/unix"
)

// envelope is the test's own frame between parent and child: a Peer-encoded
// payload, the metadata of the descriptors sent with it, and piggybacked
// releases — the shape the pool's frames will have.
type envelope struct {
	Kind     string
	Payload  []byte
	Segs     []segMeta
	Releases []Ref
	InUse    int64
}

type segMeta struct {
	ID   SegmentID
	Size int
}

func sendEnvelope(fd int, env envelope, segs []Segment) error {
	defer CloseGiven(segs)
	fds := make([]int, len(segs))
	for i, s := range segs {
		env.Segs = append(env.Segs, segMeta{s.ID, s.Size})
		fds[i] = s.FD
	}
	data, err := msgpack.Marshal(env)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for {
		// The runtime's signals (preemption, the profiler) interrupt a
		// blocking call; a message is sent whole or not at all.
		if err := unix.Sendmsg(fd, data, oob, nil, 0); err != unix.EINTR {
			return err
		}
	}
}

// recvEnvelope reads one envelope and adopts the segments sent with it.
func recvEnvelope(fd int, peer *peer) (envelope, error) {
	buf := make([]byte, 1<<16)
	oob := make([]byte, unix.CmsgSpace(4*16))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	for err == unix.EINTR { // as in sendEnvelope
		n, oobn, _, _, err = unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	}
	if err != nil {
		return envelope{}, err
	}
	if n == 0 {
		return envelope{}, errors.New("EOF")
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return envelope{}, err
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err != nil {
				return envelope{}, err
			}
			fds = append(fds, got...)
		}
	}
	var env envelope
	if err := msgpack.Unmarshal(buf[:n], &env); err != nil {
		return envelope{}, err
	}
	if len(fds) != len(env.Segs) {
		return envelope{}, fmt.Errorf("%d descriptors for %d segments", len(fds), len(env.Segs))
	}
	for i, s := range env.Segs {
		if err := peer.Adopt(s.ID, fds[i], s.Size); err != nil {
			return envelope{}, err
		}
	}
	return env, peer.ApplyReleases(env.Releases)
}

// runChild is the worker side: fd 3 is its end of the socketpair.
func runChild(role string) int {
	const fd = 3
	peer := newPeer(processArena(), WorkerSide)
	for {
		env, err := recvEnvelope(fd, peer)
		if err != nil {
			return 0 // EOF: the parent is done
		}
		var reply envelope
		var out any
		switch env.Kind {
		case "task", "hold", "return":
			var in taskIn
			if err := peer.Unmarshal(env.Payload, &in); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				return 1
			}
			res := taskOut{}
			for _, c := range in.In.Bytes() {
				res.Sum += int(c)
			}
			switch env.Kind {
			case "return":
				res.Back = in.In
			default:
				src := in.In.Bytes()
				res.Out, err = NewBuffer(min(len(src), 1<<20))
				if err != nil {
					return 1
				}
				for i := range res.Out.Bytes() {
					res.Out.Bytes()[i] = src[len(src)-1-i]
				}
				if env.Kind == "task" {
					in.In.Release()
				}
			}
			out = res
		case "stats":
			out = nil
		}
		payload, segs, err := peer.Marshal(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 1
		}
		reply.Payload, reply.Releases, reply.InUse = payload, peer.DrainReleases(), processArena().stats().InUse
		if err := sendEnvelope(fd, reply, segs); err != nil {
			return 1
		}
		if env.Kind == "hold" {
			select {} // hold everything until killed
		}
	}
}

// child is a re-executed test binary playing a worker, and the parent's
// side of it: an arena of the parent's own and a peer over it.
type child struct {
	cmd   *exec.Cmd
	fd    int
	arena *arena
	peer  *peer
}

// startChild starts a child playing role, with a fresh parent arena and
// parent-side peer.
func startChild(t *testing.T, role string) *child {
	t.Helper()
	a := newArena()
	peer := newPeer(a, ParentSide)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	// A generous receive timeout, so a broken child fails the test instead
	// of hanging it.
	require.NoError(t, unix.SetsockoptTimeval(fds[0], unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 60}))
	theirs := os.NewFile(uintptr(fds[1]), "child-end")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	theirs.Close()
	return &child{cmd: cmd, fd: fds[0], arena: a, peer: peer}
}

// call sends v and decodes the reply into out.
func (c *child) call(t *testing.T, kind string, v, out any, releases []Ref) envelope {
	t.Helper()
	payload, segs, err := c.peer.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, sendEnvelope(c.fd, envelope{Kind: kind, Payload: payload, Releases: releases}, segs))
	reply, err := recvEnvelope(c.fd, c.peer)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, c.peer.Unmarshal(reply.Payload, out))
	}
	return reply
}

type resources struct{ fds, memfds, mappings int }

func snapshot(t *testing.T) resources {
	all, memfds := countFDs(t)
	return resources{all, memfds, countMappings(t)}
}

func TestCrossProcessMoveAndReturn(t *testing.T) {
	// Not parallel: compares the process's descriptors and mappings.
	before := snapshot(t)
	c := startChild(t, "echo")
	parentArena, peer := c.arena, c.peer

	// Parent -> child: a moved Buffer; child -> parent: a new one.
	b := arenaBuffer(t, parentArena, 1<<20, 1)
	want := 0
	for _, x := range b.Bytes() {
		want += int(x)
	}
	last := b.Bytes()[len(b.Bytes())-1]
	var out taskOut
	reply := c.call(t, "task", taskIn{In: b}, &out, nil)
	assert.True(t, b.Detached())
	assert.Equal(t, want, out.Sum, "the child read the parent's memory")
	require.NotNil(t, out.Out)
	assert.Equal(t, 1<<20, out.Out.Len())
	assert.Equal(t, last, out.Out.Bytes()[0], "the child's Buffer arrived")
	assert.Zero(t, peer.Stats().Lent, "the child's release of the input came back with the result")
	assert.Equal(t, int64(1<<20), parentArena.stats().InUse, "the child's Buffer is the parent's now")
	assert.Zero(t, peer.Stats().Adopted)
	assert.Zero(t, reply.InUse, "the child gave its output away")

	// A Buffer moved to the child and returned is the parent's memory again.
	b2 := arenaBuffer(t, parentArena, 4096, 9)
	first := &b2.Bytes()[0]
	var back taskOut
	c.call(t, "return", taskIn{In: b2}, &back, nil)
	require.NotNil(t, back.Back)
	assert.Same(t, first, &back.Back.Bytes()[0])
	assert.Zero(t, peer.Stats().Lent)

	// The child's Buffer is freed here, where its segment is now.
	out.Out.Release()
	assert.Nil(t, peer.DrainReleases(), "no release goes to the child")
	stats := c.call(t, "stats", nil, nil, nil)
	assert.Zero(t, stats.InUse)

	unix.Close(c.fd) // EOF: the child exits
	require.NoError(t, c.cmd.Wait())
	require.NoError(t, peer.Close())
	back.Back.Release()
	assert.Zero(t, parentArena.stats().InUse)
	parentArena.close()
	assert.Equal(t, before, snapshot(t), "no descriptor or mapping leaked")
}

func TestCrossProcessKilledWorkerLeaksNothing(t *testing.T) {
	// Not parallel: compares the process's descriptors and mappings.
	before := snapshot(t)
	c := startChild(t, "hold")
	parentArena, peer := c.arena, c.peer

	big := arenaBuffer(t, parentArena, 44<<20, 3)
	var out taskOut
	c.call(t, "hold", taskIn{In: big}, &out, nil)
	require.NotNil(t, out.Out)
	assert.Equal(t, int64(44<<20), peer.Stats().LentBytes, "the child holds the 44 MiB")
	during := snapshot(t)
	assert.Equal(t, before.mappings+2, during.mappings, "one segment of ours, one of the child's")

	require.NoError(t, c.cmd.Process.Kill())
	require.Error(t, c.cmd.Wait())
	unix.Close(c.fd)
	require.NoError(t, peer.Close())
	assert.Equal(t, int64(1<<20), parentArena.stats().InUse, "Close freed what the dead child held; what it gave is ours")

	// The child's Buffer outlives the child: its segment is the parent's.
	assert.Equal(t, 1<<20, out.Out.Len())
	assert.Equal(t, byte((3+(44<<20-1))%256), out.Out.Bytes()[0])
	out.Out.Release()
	assert.Zero(t, parentArena.stats().InUse)
	parentArena.close()
	assert.Equal(t, before, snapshot(t), "no descriptor or mapping leaked")
}
