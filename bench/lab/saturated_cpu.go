package main

import (
	"fmt"
	"time"
)

// saturatedCPU is the saturated scenario with pool.ShedCPU in front of the
// inline jobs (GOMAXPROCS of them running, as many waiting) and a
// readiness probe at readyCPULag.
func saturatedCPU() scenario {
	group := fmt.Sprintf("saturated, ShedCPU: 200 ms jobs inline in the handlers (no pool), phases x what the cores can do; probe MaxLag %v", readyCPULag)
	return scenario{
		Group: group, Name: group, Mode: "inline", Phases: saturatedPhases, Cores: true,
		Server: serverConfig{CPU: true, ReadyLag: readyCPULag},
	}
}

const readyCPULag = 20 * time.Millisecond
