//go:build unix

package bench

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// bareWorker is a program's worker process driven without a pool: the
// frames of sdk/PROTOCOL.md, written and read by a plain loop, one call
// at a time. It is the floor the pool's round trip is measured against:
// the same SDK loop, the same JSON work, and nothing else (no queue, no
// supervision, no cancel, no size checks beyond the SDK's).
type bareWorker struct {
	cmd  *exec.Cmd
	to   *os.File // the pool's end of the program's fd 3
	from *os.File // the pool's end of the program's fd 4
	id   uint64
	head [bareFrameHeader]byte
}

const (
	bareFrameHeader = 16
	bareMaxFrame    = 64 << 20
	bareCall        = 0x01
	bareResult      = 0x03
	bareHello       = 0xFF
)

// startBare starts command as PROTOCOL.md says (fds 3 and 4, the
// OFFLOAD_WORKER variables, a process group of its own, which the SDK
// kills when it is done) and reads its hello.
func startBare(command []string) (*bareWorker, error) {
	workerIn, to, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	from, workerOut, err := os.Pipe()
	if err != nil {
		_ = workerIn.Close()
		_ = to.Close()
		return nil, err
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), "OFFLOAD_WORKER=1", "OFFLOAD_WORKER_PARENT="+strconv.Itoa(os.Getpid()),
		"OFFLOAD_WORKER_MAX_FRAME="+strconv.Itoa(bareMaxFrame))
	cmd.ExtraFiles = []*os.File{workerIn, workerOut}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the SDK kills its group
	err = cmd.Start()
	_ = workerIn.Close()
	_ = workerOut.Close()
	w := &bareWorker{cmd: cmd, to: to, from: from}
	if err != nil {
		_ = to.Close()
		_ = from.Close()
		return nil, err
	}
	kind, _, body, err := w.readFrame()
	if err == nil && kind != bareHello {
		err = fmt.Errorf("first frame of kind %#x, not the hello", kind)
	}
	var hello struct{ Version int }
	if err == nil {
		err = json.Unmarshal(body, &hello)
	}
	if err == nil && hello.Version != 1 {
		err = fmt.Errorf("hello of version %d", hello.Version)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("bare %s: %w", command[1], err), w.close())
	}
	return w, nil
}

// call runs task on in, with blob as the input's blob field if field is
// not "", and decodes the result's output into out; it returns the
// result's blob.
func (w *bareWorker) call(task string, in any, field string, blob []byte, out any) ([]byte, error) {
	header, err := json.Marshal(struct {
		Task  string `json:"task"`
		Input any    `json:"input"`
		Blob  string `json:"blob,omitempty"`
	}{task, in, field})
	if err != nil {
		return nil, err
	}
	w.id++
	msg := make([]byte, bareFrameHeader+4, bareFrameHeader+4+len(header))
	binary.BigEndian.PutUint32(msg, uint32(4+len(header)+len(blob)))
	msg[4] = bareCall
	binary.BigEndian.PutUint64(msg[8:], w.id)
	binary.BigEndian.PutUint32(msg[bareFrameHeader:], uint32(len(header)))
	if _, err := w.to.Write(append(msg, header...)); err != nil {
		return nil, err
	}
	if len(blob) > 0 {
		if _, err := w.to.Write(blob); err != nil {
			return nil, err
		}
	}
	kind, id, body, err := w.readFrame()
	switch {
	case err != nil:
		return nil, err
	case kind != bareResult || id != w.id:
		return nil, fmt.Errorf("answer of kind %#x to call %d, want a result to call %d: %.200s", kind, id, w.id, body)
	case len(body) < 4 || uint64(binary.BigEndian.Uint32(body)) > uint64(len(body)-4):
		return nil, fmt.Errorf("malformed answer of %d bytes", len(body))
	}
	n := 4 + binary.BigEndian.Uint32(body)
	var answer struct {
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(body[4:n], &answer); err != nil {
		return nil, err
	}
	return body[n:], json.Unmarshal(answer.Output, out)
}

func (w *bareWorker) readFrame() (kind byte, id uint64, body []byte, err error) {
	if _, err := io.ReadFull(w.from, w.head[:]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.BigEndian.Uint32(w.head[:])
	if n > bareMaxFrame {
		return 0, 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	body = make([]byte, n)
	if _, err := io.ReadFull(w.from, body); err != nil {
		return 0, 0, nil, err
	}
	return w.head[4], binary.BigEndian.Uint64(w.head[8:]), body, nil
}

// close closes the program's fd 3, on which the SDK kills its group, and
// kills the group itself (the SDK may have done so first), then reaps it.
func (w *bareWorker) close() error {
	_ = w.to.Close()
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL) // unreaped, the leader keeps the group's id
	err := w.cmd.Wait()
	_ = w.from.Close()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
		return nil
	}
	return err
}
