// Package budget runs long loops on the caller's goroutine in chunks bounded
// by a time budget, yielding between chunks (and before the first) so that
// whatever shares that goroutine, lock or core stays responsive.
package budget
