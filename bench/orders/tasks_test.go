package orders

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// decodeOrders is the work every mode does somewhere: encoding/json into
// []Order.
func decodeOrders(data []byte) ([]Order, error) {
	var rows []Order
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("orders: decode JSON: %w", err)
	}
	return rows, nil
}

var (
	// sumJSON is mode (2): the JSON bytes go to the task, a Summary comes
	// back.
	sumJSON = pool.Register("orders.sum-json", func(_ context.Context, data []byte) (Summary, error) {
		rows, err := decodeOrders(data)
		return summarize(rows), err
	})
	// sumBuffer is mode (3): a Buffer holding the JSON moves to the task,
	// a Summary comes back. The task owns the Buffer and frees it.
	sumBuffer = pool.Register("orders.sum-buffer", func(_ context.Context, buf *transfer.Buffer) (Summary, error) {
		defer buf.Release()
		rows, err := decodeOrders(buf.Bytes())
		return summarize(rows), err
	})
	// decodeAll is mode (4), the trap: the task decodes the JSON and sends
	// every row back.
	decodeAll = pool.Register("orders.decode-all", func(_ context.Context, data []byte) ([]Order, error) {
		return decodeOrders(data)
	})
	// echoOrders, echoPackedOrders and echoBytes return their input: the
	// boundary's own cost, there and back.
	echoOrders = pool.Register("orders.echo-rows", func(_ context.Context, rows []Order) ([]Order, error) {
		return rows, nil
	})
	echoPackedOrders = pool.Register("orders.echo-rows-codec", func(_ context.Context, rows packedOrders) (packedOrders, error) {
		return rows, nil
	})
	echoBytes = pool.Register("orders.echo-json", func(_ context.Context, data []byte) ([]byte, error) {
		return data, nil
	})
	// dataAddress reports where the task's input bytes live, to show that
	// an InProcess task shares its caller's slice.
	dataAddress = pool.Register("orders.data-address", func(_ context.Context, data []byte) (*byte, error) {
		if len(data) == 0 {
			return nil, nil
		}
		return &data[0], nil
	})
)
