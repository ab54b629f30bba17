package pool

import (
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/subproc"
)

// bindTransport makes the transport of a Subprocess or Remote pool, from
// its options, defaults filled in; nil for InProcess.
func (p *Pool) bindTransport() (seam.Carrier, error) {
	s := p.opts
	ev, logger := p.events, p.events.logger
	switch s.Isolation {
	case Remote:
		return s.Transport.Bind(seam.Env{Workers: s.Workers, Stop: p.stop, Events: ev, Logger: logger})
	case Subprocess:
		o := s.Subprocess
		t, err := subproc.New(subproc.Options{
			TerminateGrace:    o.TerminateGrace,
			MaxTasksPerWorker: o.MaxTasksPerWorker,
			MemoryLimit:       o.MemoryLimit,
			MaxPayload:        o.MaxPayload,
			StartTimeout:      o.StartTimeout,
			GOMAXPROCS:        o.GOMAXPROCS,
			Nice:              o.Nice,
			Logger:            logger,
			Command:           o.Command,
			Dir:               o.Dir,
			Env:               o.Env,
		}, p.stop, ev)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	return nil, nil
}
