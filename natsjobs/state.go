package natsjobs

import (
	"errors"
	"strconv"
	"time"
)

// ID names a job: returned by Enqueue, stable for the job's life.
type ID string

// State is where a job is in its life.
type State uint8

// A job enqueued with Delay or At is Scheduled until due. A job is
// Queued until a worker takes it, Running while an attempt runs,
// Retrying between attempts, and ends Succeeded, Dead (its last attempt
// failed, or it failed for good) or Canceled.
const (
	Scheduled State = iota + 1
	Queued
	Running
	Retrying
	Succeeded
	Dead
	Canceled
)

var stateNames = [...]string{
	Scheduled: "scheduled",
	Queued:    "queued",
	Running:   "running",
	Retrying:  "retrying",
	Succeeded: "succeeded",
	Dead:      "dead",
	Canceled:  "canceled",
}

// String is the state's lower-case word.
func (s State) String() string {
	if s >= Scheduled && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// final reports whether a job in state s has ended.
func (s State) final() bool { return s == Succeeded || s == Dead || s == Canceled }

// Status is what is known of a job.
type Status struct {
	ID    ID
	Task  string
	State State
	// Attempt is the number of attempts started (0 while Queued).
	Attempt int
	// Err is the last attempt's error text ("" if none failed).
	Err string
	// Enqueued is when Enqueue stored the job (a delayed job's, once
	// due, when it entered the queue); Started when its last attempt
	// started; Finished when it ended (zero until then).
	Enqueued, Started, Finished time.Time
}

// The errors of this package; match them with errors.Is.
var (
	// ErrNotFound: no job has this id, or its status outlived Retention.
	ErrNotFound = errors.New("natsjobs: job not found")
	// ErrDead is Wait's error for a dead job; its text ends with the last
	// attempt's error.
	ErrDead = errors.New("natsjobs: job is dead")
	// ErrCanceled is Wait's error for a canceled job.
	ErrCanceled = errors.New("natsjobs: job was canceled")
	// ErrEnded is Cancel's error for a job that had already ended (which
	// it leaves as it was), and Retry's for a job that is not dead.
	ErrEnded = errors.New("natsjobs: job has ended")
)

// Permanent marks err as not worth retrying: a task that returns it
// ends its job Dead at once, with err's text. Permanent(nil) is nil.
//
// The mark is a method, Permanent() bool, which the pool carries across
// a worker process or node as it carries the error's text (the caller
// there gets a *pool.RemoteError whose Permanent says true): so it holds
// on a pool of any isolation, and any error type of the task's own with
// that method is permanent too.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() error   { return e.err }
func (e *permanentError) Permanent() bool { return true }

// isPermanent reports whether err is marked not worth retrying, here or
// where it ran (see Permanent).
func isPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}
