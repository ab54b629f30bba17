package pool

import (
	"context"
	"log/slog"

	"github.com/offloadgo/offload/internal/subproc"
	"github.com/offloadgo/offload/internal/transport"
)

// newSubprocess makes the transport of a Subprocess pool, from settled
// options.
func newSubprocess(s settings, stop context.Context, ev transport.Events) (transport.Transport, error) {
	logger := s.Logger
	if logger == nil {
		logger = slog.Default()
	}
	o := s.Subprocess
	t, err := subproc.New(subproc.Options{
		TerminateGrace:    o.TerminateGrace,
		MaxTasksPerWorker: o.MaxTasksPerWorker,
		MemoryLimit:       o.MemoryLimit,
		MaxPayload:        o.MaxPayload,
		StartTimeout:      o.StartTimeout,
		Logger:            logger,
	}, stop, ev)
	if err != nil {
		return nil, err
	}
	return t, nil
}
