package natsjobs

import "time"

// SetUnknownTaskGraceForTest sets how long q's jobs wait for a worker
// that has their task (an hour otherwise); before q serves.
func SetUnknownTaskGraceForTest(q *Queue, d time.Duration) { q.unknownTaskGrace = d }

// KeyOfForTest is Key(k) as the key bucket's key.
func KeyOfForTest(k string) string { return keyOf(k) }

// HearKeyWaitsForTest makes each wait of an Enqueue for a Key's first
// job send that job's id on c; before q enqueues.
func HearKeyWaitsForTest(q *Queue, c chan<- ID) { q.keyWaits = c }
