package pool

// link is a task's place in the queue. It is embedded in each call, so
// queueing allocates nothing, and a cancelled task leaves the queue in O(1).
type link struct {
	prev, next *link
	job        job   // the call this link belongs to
	queued     bool  // in the queue now
	since      int64 // when it was queued (monotonic ns), for Stats.WaitTime
}

// fifo is the pool's queue of accepted tasks waiting for a worker: an
// intrusive doubly linked list, oldest first. The Pool's mutex guards it.
type fifo struct {
	head, tail *link
	n          int
}

func (q *fifo) push(l *link) {
	l.prev, l.next, l.queued = q.tail, nil, true
	if q.tail == nil {
		q.head = l
	} else {
		q.tail.next = l
	}
	q.tail = l
	q.n++
}

// pushChain appends the n links from first to last, already linked to
// each other and marked queued, in one step.
func (q *fifo) pushChain(first, last *link, n int) {
	first.prev = q.tail
	if q.tail == nil {
		q.head = first
	} else {
		q.tail.next = first
	}
	q.tail = last
	q.n += n
}

// pop removes and returns the oldest link, or nil when the queue is empty.
func (q *fifo) pop() *link {
	l := q.head
	if l != nil {
		q.remove(l)
	}
	return l
}

// remove unlinks l and reports whether it was queued.
func (q *fifo) remove(l *link) bool {
	if !l.queued {
		return false
	}
	if l.prev == nil {
		q.head = l.next
	} else {
		l.prev.next = l.next
	}
	if l.next == nil {
		q.tail = l.prev
	} else {
		l.next.prev = l.prev
	}
	l.prev, l.next, l.queued = nil, nil, false
	q.n--
	return true
}

// drain empties the queue and returns what was in it, oldest first.
func (q *fifo) drain() []job {
	jobs := make([]job, 0, q.n)
	for l := q.pop(); l != nil; l = q.pop() {
		jobs = append(jobs, l.job)
	}
	return jobs
}
