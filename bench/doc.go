// Package bench holds offload's go test -bench comparisons against its peers
// (pond, ants, a hand-written channel pool) and the programs that exercise
// the pool end to end. Nothing imports it.
package bench
