//go:build !race

package workerproc

// raceEnabled reports a -race build (see newBody).
const raceEnabled = false
