// Package testkit holds what the module's tests share across packages: a
// buffer logs can be written to while a test reads it, a context whose
// methods panic, a bound on a call that might deadlock, and a child
// process that holds memory. Only tests import it.
package testkit

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer safe for writes (a logger's, a process's
// output) and reads (the test's) at once. Its zero value is ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// PanicCtx is a context whose method named Method ("Done", "Err",
// "Value" or "Deadline") panics; the others are Context's.
type PanicCtx struct {
	context.Context
	Method string
}

func (c PanicCtx) Done() <-chan struct{} {
	if c.Method == "Done" {
		panic("PanicCtx: Done")
	}
	return c.Context.Done()
}

func (c PanicCtx) Err() error {
	if c.Method == "Err" {
		panic("PanicCtx: Err")
	}
	return c.Context.Err()
}

func (c PanicCtx) Value(key any) any {
	if c.Method == "Value" {
		panic("PanicCtx: Value")
	}
	return c.Context.Value(key)
}

func (c PanicCtx) Deadline() (time.Time, bool) {
	if c.Method == "Deadline" {
		panic("PanicCtx: Deadline")
	}
	return c.Context.Deadline()
}

// Methods are the methods PanicCtx can make panic.
var Methods = []string{"Done", "Err", "Value", "Deadline"}

// Within runs f and fails the test if it has not returned after d: a
// deadlock must fail the test, not hang it. f runs on a goroutine of its
// own, so it must assert, not require.
func Within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v: stuck", what, d)
	}
}
