// Package pool runs registered tasks off the caller's goroutine on a bounded
// pool of workers: goroutines (InProcess, the default) or re-executed copies
// of the program (Subprocess), behind one API.
//
// Work is registered at package level with Register so that worker processes
// know it too. A Pool admits at most Workers running plus MaxQueue waiting
// tasks; past that Submit and Run fail at once with ErrQueueFull, so a server
// can answer 503 instead of piling work up (see Shed and WriteError).
package pool
