package budget

import "time"

// Report describes a run so far. Each and Loop return it (also when ctx
// ends early); a Stepper hands it out after any step.
type Report struct {
	// Items is how many items ran to completion.
	Items int
	// Chunks is how many chunks ran.
	Chunks int
	// MaxBlock is the longest chunk: the longest the caller's goroutine
	// went without yielding.
	MaxBlock time.Duration
	// Total is the wall-clock time of the run, yields and rests included.
	// For a Stepper it runs from the start of the first chunk to the end of
	// the latest one, so it includes the time between steps.
	Total time.Duration
	// Busy is the time spent inside chunks (the items plus the clock reads).
	Busy time.Duration
	// Rest is the time spent resting for Options.DutyCycle.
	Rest time.Duration
	// Yields counts yields (and rests) between chunks and before the first.
	Yields int
	// ClockReads counts the clock reads made inside chunks to decide when a
	// chunk ends; Items/ClockReads is the average stride.
	ClockReads int
}

// Chunk is one chunk of a Stepper: items Start through End-1 ran, taking
// Took.
type Chunk struct {
	Start, End int
	Took       time.Duration
}
