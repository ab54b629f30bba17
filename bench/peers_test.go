package bench

import (
	"sync"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
)

// The peers of the pool benchmarks, each driven the way its own docs
// suggest, all with the same number of workers.

// floorPool is the fastest pool one would write by hand for one task type:
// typed requests on a buffered channel, no futures, no cancellation, no
// stats. It is the floor offload is measured against.
type floorPool struct {
	jobs chan *floorJob
	wg   sync.WaitGroup
}

type floorJob struct {
	in, out int
	done    chan struct{}
}

func newFloorPool(workers, queue int, fn func(int) int) *floorPool {
	p := &floorPool{jobs: make(chan *floorJob, queue)}
	for range workers {
		p.wg.Go(func() {
			for j := range p.jobs {
				j.out = fn(j.in)
				j.done <- struct{}{}
			}
		})
	}
	return p
}

func (p *floorPool) close() { close(p.jobs); p.wg.Wait() }

func newAnts(workers int) *ants.Pool {
	p, err := ants.NewPool(workers)
	if err != nil {
		panic(err)
	}
	return p
}

func newPond(workers int) pond.Pool { return pond.NewPool(workers) }
