package pool

// lockWorker takes p.mu for a worker between two tasks. It tries for a
// while before it blocks: the lock is held for a few hundred nanoseconds
// at a time, and a worker that blocks on it is parked and readied onto the
// unlocker's processor, where it waits behind the unlocker (a submitter
// that doesn't block) while its own processor idles. sync.Mutex spins by
// itself only while the local run queue is empty, which it is not when the
// worker has just woken a caller.
func (p *Pool) lockWorker() {
	for range workerSpins {
		if p.mu.TryLock() {
			return
		}
	}
	p.mu.Lock()
}

// workerSpins is how many times lockWorker tries before it blocks; at
// tens of nanoseconds a try, a few microseconds in all.
const workerSpins = 100
