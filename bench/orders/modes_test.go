package orders

import (
	"bytes"
	"context"
	"errors"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// env is what one op of a mode needs.
type env struct {
	ctx  context.Context
	pool *pool.Pool // nil for the mode that stays on the caller
	data *dataset
	m    *meter
	// untimed runs f outside the benchmark's timer and meter: mode (3)
	// fills its Buffer there, as a caller that produced the bytes in a
	// Buffer in the first place would not pay for a copy into one, and
	// the echo modes check what came back there.
	untimed func(f func())
}

// mode is one way of getting the rows decoded and summed.
type mode struct {
	name   string
	pooled bool
	op     func(e *env) (Summary, error)
}

var modes = []mode{
	{name: "decode-in-caller", op: decodeInCaller},
	{name: "send-bytes", pooled: true, op: sendBytes},
	{name: "move-buffer", pooled: true, op: moveBuffer},
	{name: "trap-rows-back", pooled: true, op: rowsBack},
	// The page's second table: the boundary's own cost, there and back,
	// for the rows as objects and as the JSON of the same rows.
	{name: "echo-rows", pooled: true, op: echoRows},
	{name: "echo-json", pooled: true, op: echoJSON},
	// The rows again, through a hand-written msgpack codec instead of
	// msgpack's reflection: what a row type that crosses often can have.
	{name: "echo-rows-codec", pooled: true, op: echoPacked},
}

// decodeInCaller is mode (1): the caller decodes and sums, busy throughout.
func decodeInCaller(e *env) (Summary, error) {
	e.m.start()
	defer e.m.end()
	rows, err := decodeOrders(e.data.json)
	return summarize(rows), err
}

// sendBytes is mode (2): the JSON bytes go to a task that returns the sum.
func sendBytes(e *env) (Summary, error) {
	return submitAndWait(e, sumJSON, e.data.json)
}

// moveBuffer is mode (3): a Buffer holding the JSON moves to a task that
// returns the sum.
func moveBuffer(e *env) (Summary, error) {
	var buf *transfer.Buffer
	var err error
	e.untimed(func() {
		if buf, err = transfer.NewBuffer(len(e.data.json)); err == nil {
			copy(buf.Bytes(), e.data.json)
		}
	})
	if err != nil {
		return Summary{}, err
	}
	defer buf.Release() // a no-op once the task has it; frees it on a refusal
	return submitAndWait(e, sumBuffer, buf)
}

// submitAndWait submits in to task and waits for its output, metering the
// caller's busy time: Submit, not the wait.
func submitAndWait[In, Out any](e *env, task pool.Task[In, Out], in In) (Out, error) {
	e.m.start()
	defer e.m.end()
	f, err := pool.Submit(e.ctx, e.pool, task, in)
	if err != nil {
		var zero Out
		return zero, err
	}
	e.m.park()
	return f.Wait()
}

// rowsBack is mode (4), the trap: the task decodes the JSON and sends all
// rows back; the caller sums them.
func rowsBack(e *env) (Summary, error) {
	e.m.start()
	defer e.m.end()
	f, err := pool.Submit(e.ctx, e.pool, decodeAll, e.data.json)
	if err != nil {
		return Summary{}, err
	}
	e.m.park()
	rows, err := f.Wait()
	e.m.resume()
	if err != nil {
		return Summary{}, err
	}
	return summarize(rows), nil
}

// echoRows sends the rows to a task that returns them as they came. The
// check that they did is outside the meter, and outside the timer unless
// it is free (in process the rows come back as the very same slice).
func echoRows(e *env) (Summary, error) {
	rows, err := submitAndWait(e, echoOrders, e.data.rows)
	if err != nil || sameSlice(rows, e.data.rows) {
		return e.data.want, err
	}
	var got Summary
	e.untimed(func() { got = summarize(rows) })
	return got, nil
}

// echoPacked is echoRows for packedOrders, checked the same way.
func echoPacked(e *env) (Summary, error) {
	sent := packedOrders(e.data.rows)
	rows, err := submitAndWait(e, echoPackedOrders, sent)
	if err != nil || sameSlice(rows, sent) {
		return e.data.want, err
	}
	var got Summary
	e.untimed(func() { got = summarize(rows) })
	return got, nil
}

// echoJSON sends the JSON to a task that returns it as it came, checked
// as echoRows' rows are.
func echoJSON(e *env) (Summary, error) {
	data, err := submitAndWait(e, echoBytes, e.data.json)
	if err != nil || sameSlice(data, e.data.json) {
		return e.data.want, err
	}
	var got Summary
	e.untimed(func() {
		if bytes.Equal(data, e.data.json) {
			got = e.data.want // the very bytes the summary was made from
		}
	})
	return got, nil
}

// sameSlice reports whether a and b are the same memory: then their
// contents are equal without a look.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// errWrongSum is a mode reaching another summary than the generator's.
var errWrongSum = errors.New("orders: wrong summary")
