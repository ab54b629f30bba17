package natsjobs

import "time"

// SetUnknownTaskGraceForTest sets how long q's jobs wait for a worker
// that has their task (an hour otherwise); before q serves.
func SetUnknownTaskGraceForTest(q *Queue, d time.Duration) { q.unknownTaskGrace = d }
