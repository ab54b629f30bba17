package pool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/pool"
)

// A pool whose worker processes are not its own refuses RecycleWorkers
// with ErrUnsupported, so that a deploy step learns that no new worker
// code went in service; after Close, it is ErrClosed.
func TestRecycleWorkersWithoutOwnProcesses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts pool.Options
		want string
	}{
		{"in process", pool.Options{Workers: 1}, "an InProcess pool has no worker processes"},
		{"remote", pool.Options{Workers: 1, Isolation: pool.Remote, Transport: idleTransport{}},
			"call RecycleWorkers on each node's local pool"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newPool(t, tt.opts)
			err := p.RecycleWorkers(context.Background())
			require.ErrorIs(t, err, errors.ErrUnsupported)
			assert.Contains(t, err.Error(), tt.want)
			require.NoError(t, p.Close())
			require.ErrorIs(t, p.RecycleWorkers(context.Background()), errors.ErrUnsupported,
				"what a pool is does not change with Close")
		})
	}
	var zero pool.Pool
	assert.Error(t, zero.RecycleWorkers(context.Background()))
}

// idleTransport is a Remote transport whose carrier is never given a
// call.
type idleTransport struct{}

func (idleTransport) Bind(seam.Env) (seam.Carrier, error) { return idleCarrier{}, nil }

type idleCarrier struct{}

func (idleCarrier) Encode(string, []byte, any, seam.Form) ([]byte, error) { return nil, nil }
func (idleCarrier) NewRunner(int) seam.Runner                             { return nil }
