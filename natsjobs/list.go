package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// ListOptions select a page of a state's jobs (see ListPage). The zero
// value asks for the first page of 100.
type ListOptions struct {
	// Limit bounds the jobs on the page, from 1 to 1,000. 0 means 100.
	Limit int
	// After is the Next of the page before, in the list of the same
	// state (another's is an error); "" starts from the oldest.
	After string
}

// Page is one page of the jobs in a state.
type Page struct {
	Jobs []Status
	// Next is where the list goes on: ListOptions.After for the next
	// page. "" once the list has reached its end (of the jobs stored
	// when the page was read).
	Next string
}

const (
	defaultListLimit = 100
	maxListLimit     = 1000
	// pageScan bounds the stored jobs a page reads, so that a page costs
	// at most that many requests however rare its state is.
	pageScan = 1000
)

// List returns up to n jobs in state, oldest first, as ListPage orders
// them: it reads pages until it has n jobs or the list ends, so its
// cost is ListPage's, for as many pages as that takes. It blocks on the
// server for as long as ctx allows; on an error it returns the jobs
// listed before it.
func (q *Queue) List(ctx context.Context, state State, n int) ([]Status, error) {
	var list []Status
	o := ListOptions{}
	for len(list) < n {
		o.Limit = min(n-len(list), maxListLimit)
		page, err := q.ListPage(ctx, state, o)
		if err != nil {
			return list, err
		}
		list = append(list, page.Jobs...)
		if page.Next == "" {
			break
		}
		o.After = page.Next
	}
	return list, nil
}

// ListPage returns a page of the jobs in state, oldest first, and the
// cursor of the next page. It blocks on the server for as long as ctx
// allows; it is safe for concurrent use.
//
// The pages are read from the queue as it runs, not from a snapshot: a
// job is listed in the state its page found it in, once per walk of a
// state's list (a dead job retried and dead again comes again, in the
// order of its second death); a job that changes state while an
// operator pages may be missed by both states' lists. The cursor is a
// position in what the state is read from, so a job that changes state
// shifts no page.
//
// A page reads at most 1,000 stored jobs: where its state is rare, a
// page can hold fewer than Limit jobs, or none, and still have a Next.
// A list ends when Next is "".
//
// Where each state is read from, and the cost (each stored job read is
// one request to the server; the work and dead streams' jobs take a
// second, for their status records):
//   - Queued: the work stream, in the order the jobs were enqueued (or
//     retried): walking the list to its end reads every job waiting,
//     retrying or running, at most Options.MaxJobs.
//   - Running, Retrying: the same, in the same order, up to the last
//     job a worker took: the jobs no worker has taken yet are not read.
//   - Dead: the dead stream, in the order the jobs died: the dead jobs
//     kept for Retention.
//   - Scheduled: the schedules stream, in the order the jobs were
//     enqueued: walking the list to its end reads every job not yet due.
//     A job due but waiting for room in a full queue is Queued to
//     Status, and in neither list.
//   - Succeeded, Canceled: the status bucket, in the order of the jobs'
//     last change: walking the list to its end reads the status record
//     of every job kept, results included, whatever state it is in:
//     O(jobs in Retention).
func (q *Queue) ListPage(ctx context.Context, state State, o ListOptions) (Page, error) {
	return q.listPage(ctx, state, o, pageScan)
}

// listPage is ListPage reading at most scan stored jobs.
func (q *Queue) listPage(ctx context.Context, state State, o ListOptions, scan int) (Page, error) {
	limit, err := listLimit(o.Limit)
	if err != nil {
		return Page{}, err
	}
	after, err := parseCursor(state, o.After)
	if err != nil {
		return Page{}, err
	}
	src, err := q.listSource(ctx, state)
	if err != nil {
		return Page{}, fmt.Errorf("natsjobs: list %s jobs: %w", state, err)
	}
	page := Page{Jobs: []Status{}}
	seq := after + 1
	for range scan {
		if seq > src.last {
			return page, nil
		}
		m, err := src.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(src.subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return page, nil // past the last stored
		}
		if err != nil {
			return Page{}, fmt.Errorf("natsjobs: list %s jobs: %w", state, err)
		}
		if m.Sequence > src.last {
			return page, nil
		}
		seq = m.Sequence + 1
		st, ok, err := src.read(ctx, m)
		if err != nil {
			return Page{}, fmt.Errorf("natsjobs: list %s jobs: %w", state, err)
		}
		if ok && st.State == state {
			page.Jobs = append(page.Jobs, st)
			if len(page.Jobs) == limit {
				break
			}
		}
	}
	page.Next = cursor(state, seq-1)
	return page, nil
}

// listLimit is ListOptions.Limit with its default, or what is wrong
// with it.
func listLimit(n int) (int, error) {
	if n == 0 {
		return defaultListLimit, nil
	}
	if n < 0 || n > maxListLimit {
		return 0, fmt.Errorf("natsjobs: list limit %d: want 1 to %d", n, maxListLimit)
	}
	return n, nil
}

// A cursor is the state listed and the sequence of the last stored job
// its page read, in the stream the state is read from: "dead.42".
func cursor(state State, seq uint64) string {
	return state.String() + "." + strconv.FormatUint(seq, 10)
}

// parseCursor is the sequence a list of state goes on after ("" for
// the start), or what is wrong with the cursor.
func parseCursor(state State, c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	word, seq, ok := strings.Cut(c, ".")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil || word != state.String() {
		return 0, fmt.Errorf("natsjobs: %q is no cursor of a list of %s jobs", c, state)
	}
	return n, nil
}

// parseState is the State whose String is word.
func parseState(word string) (State, bool) {
	for s := Scheduled; s <= Canceled; s++ {
		if s.String() == word {
			return s, true
		}
	}
	return 0, false
}

// listSource is where a state's jobs are read from: the messages of
// stream on subject, up to sequence last, each read as a job's status by
// read (ok false: the message is no job's).
type listSource struct {
	stream  jetstream.Stream
	subject string
	last    uint64
	read    func(context.Context, *jetstream.RawStreamMsg) (st Status, ok bool, err error)
}

// toTheEnd is a listSource's last when it reads to its stream's end.
const toTheEnd = ^uint64(0)

func (q *Queue) listSource(ctx context.Context, state State) (listSource, error) {
	switch state {
	case Queued:
		return listSource{stream: q.work, subject: q.subject + "*", last: toTheEnd, read: q.readWork}, nil
	case Running, Retrying:
		// A job running or retrying was delivered to a worker: it lies at
		// or before the last job the workers' consumer delivered (0 if
		// none: then the list is empty).
		info, err := q.workers.Info(ctx)
		if err != nil {
			return listSource{}, err
		}
		return listSource{stream: q.work, subject: q.subject + "*", last: info.Delivered.Stream, read: q.readWork}, nil
	case Dead:
		return listSource{stream: q.dead, subject: q.deadSubject("*"), last: toTheEnd, read: q.readDead}, nil
	case Scheduled:
		return listSource{stream: q.delayed, subject: q.scheduledSubject("*"), last: toTheEnd, read: q.readScheduled}, nil
	case Succeeded, Canceled:
		bucket := q.statuses.Bucket()
		stream, err := q.js.Stream(ctx, "KV_"+bucket)
		if err != nil {
			return listSource{}, err
		}
		prefix := "$KV." + bucket + "."
		read := func(_ context.Context, m *jetstream.RawStreamMsg) (Status, bool, error) {
			return readRecord(prefix, m)
		}
		return listSource{stream: stream, subject: prefix + ">", last: toTheEnd, read: read}, nil
	}
	return listSource{}, errors.New("no such state")
}

// readWork reads a job in the work stream: Queued while it has no
// status record (as Status reads it), else as its record says.
func (q *Queue) readWork(ctx context.Context, m *jetstream.RawStreamMsg) (Status, bool, error) {
	id := ID(strings.TrimPrefix(m.Subject, q.subject))
	if !validID(id) {
		return Status{}, false, nil // garbage, which a worker drops
	}
	r, _, err := q.record(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Status{ID: id, Task: m.Header.Get(headerTask), State: Queued, Enqueued: m.Time}, true, nil
	}
	if err != nil {
		return Status{}, false, err
	}
	return r.status(id), true, nil
}

// readScheduled reads a job's schedule: Scheduled, as Status reads it
// (a job cancelled has no schedule left).
func (q *Queue) readScheduled(_ context.Context, m *jetstream.RawStreamMsg) (Status, bool, error) {
	id := ID(strings.TrimPrefix(m.Subject, q.scheduledSubject("")))
	if !validID(id) {
		return Status{}, false, nil
	}
	return Status{ID: id, Task: m.Header.Get(headerTask), State: Scheduled, Enqueued: m.Time}, true, nil
}

// readDead reads a job's copy in the dead stream as its record says:
// a copy outlives its record's Dead while Retry runs the job again.
func (q *Queue) readDead(ctx context.Context, m *jetstream.RawStreamMsg) (Status, bool, error) {
	id := ID(strings.TrimPrefix(m.Subject, q.deadSubject("")))
	r, _, err := q.record(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Status{}, false, nil // past Retention
	}
	if err != nil {
		return Status{}, false, err
	}
	return r.status(id), true, nil
}

// readRecord reads a message of the status bucket's stream, whose
// subjects are prefix and the job's id: the bucket keeps one, its
// record as last written, so no second request is needed.
func readRecord(prefix string, m *jetstream.RawStreamMsg) (Status, bool, error) {
	if m.Header.Get("KV-Operation") != "" {
		return Status{}, false, nil // a deletion's marker
	}
	id := ID(strings.TrimPrefix(m.Subject, prefix))
	r, err := decodeRecord(m.Data)
	if err != nil {
		return Status{}, false, fmt.Errorf("job %s: %w", id, err)
	}
	return r.status(id), true, nil
}
