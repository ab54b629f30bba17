package natsjobs

import "time"

// OptionsOf is the Options q follows: o's defaults, and where q's user
// may not update its streams, what they say (see Open).
func OptionsOf(q *Queue) Options { return q.o }

// RecordForTest is a status record as a worker writes it: the claim of
// an attempt (Running), or its outcome (Succeeded with out's encoding).
func RecordForTest(task string, state State, attempt int, out any) []byte {
	r := record{Task: task, State: state, Attempt: attempt, Enqueued: time.Now(), Started: time.Now()}
	if out != nil {
		b, err := encodeByName(out)
		if err != nil {
			panic(err)
		}
		r.Out = b
	}
	b, err := encodeByName(r)
	if err != nil {
		panic(err)
	}
	return b
}
