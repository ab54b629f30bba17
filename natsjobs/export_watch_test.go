package natsjobs

// WaitersForTest is how many Waits are subscribed to id's changes.
func WaitersForTest(q *Queue, id ID) int {
	q.watch.mu.Lock()
	defer q.watch.mu.Unlock()
	return len(q.watch.subs[id])
}

// RewatchesForTest is how often q's watch was renewed, on a reconnect
// or after it ended under it.
func RewatchesForTest(q *Queue) int64 { return q.watch.rewatches.Load() }
