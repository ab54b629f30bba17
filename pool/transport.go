package pool

import (
	"log/slog"

	"github.com/offloadgo/offload/internal/subproc"
	"github.com/offloadgo/offload/internal/transport"
)

// bindTransport makes the transport of a Subprocess or Remote pool, from
// its settled options; nil for InProcess.
func (p *Pool) bindTransport() (transport.Transport, error) {
	s := p.opts
	logger := s.Logger
	if logger == nil {
		logger = slog.Default()
	}
	ev := poolEvents{stats: &p.stats, logger: logger, hook: s.OnWorkerEvent}
	switch s.Isolation {
	case Remote:
		return s.Transport.Bind(transport.Env{Workers: s.Workers, Stop: p.stop, Events: ev, Logger: logger})
	case Subprocess:
		o := s.Subprocess
		t, err := subproc.New(subproc.Options{
			TerminateGrace:    o.TerminateGrace,
			MaxTasksPerWorker: o.MaxTasksPerWorker,
			MemoryLimit:       o.MemoryLimit,
			MaxPayload:        o.MaxPayload,
			StartTimeout:      o.StartTimeout,
			GOMAXPROCS:        o.GOMAXPROCS,
			Logger:            logger,
		}, p.stop, ev)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	return nil, nil
}
