package natsjobs

import (
	"errors"
	"fmt"

	"github.com/offloadgo/offload/internal/shmbuf"
)

// encodeOutput encodes a task's output for its job's record, and then
// releases any *transfer.Buffer in it: Serve is the output's only
// reader, as a pool's caller is (a Buffer from a worker process gives
// its memory back to the worker). A Buffer can't be stored, since its
// memory is a process's: an output holding one fails, saying so.
func encodeOutput(task string, out any) ([]byte, error) {
	defer shmbuf.ReleaseAll(out)
	b, err := encodeByName(out)
	if errors.Is(err, shmbuf.ErrNoPeer) {
		return nil, fmt.Errorf("natsjobs: output of task %q holds a *transfer.Buffer, which moves memory of a process and can't be stored: return []byte", task)
	}
	if err != nil {
		return nil, fmt.Errorf("natsjobs: encode output of task %q: %v", task, err)
	}
	return b, nil
}
