package testkit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// FaultCtx is a context whose method Method ("Done", "Err", "Value" or
// "Deadline") misbehaves from its From-th call on (From 1: every call):
// it panics, or, with Block, blocks until Release. The other methods, and
// Method's calls before the From-th, are Context's. Make it with
// NewFaultCtx; safe for concurrent use.
type FaultCtx struct {
	context.Context
	Method string
	From   int
	Block  bool

	calls   atomic.Int64
	blocked chan struct{} // closed as a call first blocks
	release chan struct{} // closed by Release
	once    sync.Once
	relOnce sync.Once
}

// NewFaultCtx returns parent with method faulty from its from-th call.
func NewFaultCtx(parent context.Context, method string, from int, block bool) *FaultCtx {
	return &FaultCtx{Context: parent, Method: method, From: from, Block: block,
		blocked: make(chan struct{}), release: make(chan struct{})}
}

// Blocked is closed once a call has blocked.
func (c *FaultCtx) Blocked() <-chan struct{} { return c.blocked }

// Release lets every blocked call, and every later one, go on as
// Context's would.
func (c *FaultCtx) Release() { c.relOnce.Do(func() { close(c.release) }) }

// String names the fault (see FaultName).
func (c *FaultCtx) String() string { return FaultName(c.Method, c.From, c.Block) }

// FaultName names a FaultCtx's fault, for a test's name:
// METHOD-panics|blocks-from-call-N.
func FaultName(method string, from int, block bool) string {
	what := "panics"
	if block {
		what = "blocks"
	}
	return fmt.Sprintf("%s-%s-from-call-%d", method, what, from)
}

// fault misbehaves if method is the faulty one and this is its From-th
// call or later.
func (c *FaultCtx) fault(method string) {
	if method != c.Method || c.calls.Add(1) < int64(c.From) {
		return
	}
	if !c.Block {
		panic("FaultCtx: " + c.String())
	}
	c.once.Do(func() { close(c.blocked) })
	<-c.release
}

func (c *FaultCtx) Done() <-chan struct{} {
	c.fault("Done")
	return c.Context.Done()
}

func (c *FaultCtx) Err() error {
	c.fault("Err")
	return c.Context.Err()
}

func (c *FaultCtx) Value(key any) any {
	c.fault("Value")
	return c.Context.Value(key)
}

func (c *FaultCtx) Deadline() (time.Time, bool) {
	c.fault("Deadline")
	return c.Context.Deadline()
}
