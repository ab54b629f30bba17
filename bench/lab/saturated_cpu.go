package main

import (
	"fmt"
	"runtime"
	"time"
)

// saturatedCPU are the saturated scenarios with ShedCPU's slots in front
// of the inline jobs (pool.NewCPUSlots: one running a CPU, as many
// waiting) and a readiness probe that reads them and the lag at
// readyCPULag: the server at its default GOMAXPROCS, then at one P above
// its CPUs, which the slots leave to the requests they do not wrap.
func saturatedCPU() []scenario {
	var all []scenario
	for _, procs := range []int{0, runtime.NumCPU() + 1} {
		name := "ShedCPU"
		if procs > 0 {
			name = fmt.Sprintf("ShedCPU, server GOMAXPROCS=%d", procs)
		}
		group := fmt.Sprintf("saturated, %s: 200 ms jobs inline in the handlers (no pool), phases x what the cores can do; probe MaxLag %v and the CPU slots", name, readyCPULag)
		all = append(all, scenario{
			Group: group, Name: group, Procs: procs, Mode: "inline", Phases: saturatedPhases, Cores: true,
			Server: serverConfig{CPU: true, ReadyLag: readyCPULag},
		})
	}
	return all
}

const readyCPULag = 20 * time.Millisecond
