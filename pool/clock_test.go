package pool

import "testing"

// BenchmarkNow is the clock read a task's run time takes twice (picked up,
// returned): a large share of Run's cost for a trivial task on a VM whose
// clock source is slow to read (kvm-clock), and what ants, which keeps no
// per-task time, does not pay.
func BenchmarkNow(b *testing.B) {
	clock := newMonoclock()
	var sum int64
	for b.Loop() {
		sum += clock.now()
	}
	if sum == 0 {
		b.Fatal("the clock did not move")
	}
}
