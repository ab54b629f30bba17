package pool

// WaitersForTest reports how many SubmitBlocking callers are waiting.
func WaitersForTest(p *Pool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters.w)
}
