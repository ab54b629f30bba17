// Package subproc is the transport of a Subprocess pool: the pool's worker
// goroutines each keep a worker process, a copy of the program itself, and
// run their tasks in it over a workerproc channel.
//
// Its files are named by the side they run on: parent_*.go in the pool's
// process (ProcessCarrier, the runner of one worker goroutine and its
// exchange of one call), child_*.go in the worker process (Serve and the
// server that runs each call). wire.go (the frames), moves.go and
// peerlink.go (Buffers moved beside a frame) and platform.go serve both.
package subproc
