package natsremote_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/natsremote/embedded"
	"github.com/offloadgo/offload/pool"
)

// Random submissions, cancellations, node losses and, at the end, the
// pool's close: every Future resolves exactly once, with a result or an
// error the contract names, every accepted task is counted once, and every
// node's running count returns to zero.
func TestPropertyEveryFutureResolvesOnce(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 15))
			s := startServer(t, embedded.Options{})
			opts := natsremote.ServeOptions{Pool: "property", Local: pool.Options{Workers: 2}}
			var nodes []*node
			for range 3 {
				nodes = append(nodes, serve(t, s, opts))
			}
			p := remotePool(t, connect(t, s), "property", pool.Options{Workers: 6, MaxQueue: pool.Unbounded})
			waitNodes(t, p, 3)

			type submitted struct {
				f      *pool.Future[int]
				cancel context.CancelFunc
			}
			var calls []submitted
			killed := 0
			for range 200 {
				switch op := r.IntN(100); {
				case op < 60:
					ctx, cancel := context.WithCancel(context.Background())
					f, err := pool.Submit(ctx, p, sleep, time.Duration(r.IntN(20))*time.Millisecond)
					require.NoError(t, err)
					calls = append(calls, submitted{f, cancel})
				case op < 85 && len(calls) > 0:
					calls[r.IntN(len(calls))].cancel()
				case op < 90:
					i := r.IntN(len(nodes))
					nodes[i].nc.Close() // the node is lost to its submitters
					require.Error(t, nodes[i].wait(t))
					nodes[i] = serve(t, s, opts)
					killed++
				default:
					time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
				}
			}
			require.NoError(t, p.Close())
			_, err := pool.Submit(context.Background(), p, add, [2]int{})
			require.ErrorIs(t, err, pool.ErrClosed)

			var results, failed int
			for _, c := range calls {
				select {
				case <-c.f.Done():
				case <-time.After(10 * time.Second):
					t.Fatal("a Future never resolved")
				}
				_, err := c.f.Wait()
				switch {
				case err == nil:
					results++
				case errors.Is(err, pool.ErrNodeLost), errors.Is(err, pool.ErrTerminated),
					errors.Is(err, context.Canceled), errors.Is(err, pool.ErrClosed):
					failed++
				default:
					t.Errorf("an error outside the contract: %v", err)
				}
				c.cancel()
			}
			st := p.Stats()
			t.Logf("%d calls: %d results, %d errors; %d nodes killed; %+v", len(calls), results, failed, killed, st)
			assert.EqualValues(t, len(calls), st.Submitted)
			assert.EqualValues(t, len(calls), st.Completed+st.Failed+st.Canceled, "each counted once: %+v", st)
			assert.EqualValues(t, results, st.Completed)

			observer := remotePool(t, connect(t, s), "property", pool.Options{Workers: 1})
			waitNodes(t, observer, len(nodes))
			waitIdle(t, observer)
		})
	}
}
