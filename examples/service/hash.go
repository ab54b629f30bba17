package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/offloadgo/offload/pool"
)

// HashIn is the task's input: the request's body and how many rounds of
// SHA-256 to put it through.
type HashIn struct {
	Data   []byte
	Rounds int
}

// Hash is the service's CPU-heavy work. It is registered at package level
// because worker processes and worker nodes are this same binary, and
// find it there by name.
var Hash = pool.Register("hash", func(ctx context.Context, in HashIn) (string, error) {
	sum := sha256.Sum256(in.Data)
	for i := 1; i < in.Rounds; i++ {
		// A task that never looked would still be stopped at its
		// deadline: its worker process is killed after TerminateGrace.
		if i%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		sum = sha256.Sum256(sum[:])
	}
	return hex.EncodeToString(sum[:]), nil
})
