package natsremote_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote"
	"github.com/offloadgo/offload/pool"
)

// Random submissions, cancellations, node losses and, at the end, the
// pool's close, on a server with authentication on, while a rogue with
// node credentials forges answers, pongs and adverts: every Future
// resolves exactly once, with a result or an error the contract names,
// every call ran at most once (and once if it has a result), every
// accepted task is counted once, and every node's running count returns
// to zero.
func TestPropertyEveryFutureResolvesOnce(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 15))
			s := trustServer(t, "property")
			// At trustHeartbeat: the rogue floods the pool's inbox, and
			// on a busy machine its backlog holds pongs past a 1 s
			// heartbeat's loss bound (see trustHeartbeat).
			opts := natsremote.ServeOptions{Pool: "property", Name: "worker", Heartbeat: trustHeartbeat, Local: pool.Options{Workers: 2}}
			serveWorker := func() *node { return serveOn(t, connectAs(t, s, "worker"), opts) }
			var nodes []*node
			for range 3 {
				nodes = append(nodes, serveWorker())
			}
			rogue := startRogue(t, connectAs(t, s, "rogue"), "property")
			p := remotePoolBeating(t, connectAs(t, s, "svc"), "property", trustHeartbeat, pool.Options{Workers: 6, MaxQueue: pool.Unbounded})
			waitNodes(t, p, 4) // the workers, and the rogue
			for _, n := range p.Nodes() {
				if name, suffix, _ := strings.Cut(n.ID, "-"); name == "worker" {
					ghost := make(chan advertSeen, 1)
					ghost <- advertSeen{name: name, suffix: suffix}
					rogue.forgeAdverts(ghost)
					break
				}
			}

			type submitted struct {
				f      *pool.Future[string]
				cancel context.CancelFunc
				key    string
			}
			var calls []submitted
			killed := 0
			for range 200 {
				switch op := r.IntN(100); {
				case op < 60:
					ctx, cancel := context.WithCancel(context.Background())
					key := fmt.Sprintf("property-%d-%d-%d", seed, time.Now().UnixNano(), len(calls))
					f, err := pool.Submit(ctx, p, tallySleep, tallyIn{Key: key, D: time.Duration(r.IntN(20)) * time.Millisecond})
					if errors.Is(err, pool.ErrQueueFull) {
						cancel() // no live node at that moment: rejected, and that is all
						continue
					}
					require.NoError(t, err)
					calls = append(calls, submitted{f, cancel, key})
				case op < 85 && len(calls) > 0:
					calls[r.IntN(len(calls))].cancel()
				case op < 90:
					i := r.IntN(len(nodes))
					nodes[i].NC.Close() // the node is lost to its submitters
					require.Error(t, nodes[i].Wait(t))
					nodes[i] = serveWorker()
					killed++
				default:
					time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
				}
			}
			rogue.stop()
			rogue.nc.Close()
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
				out, err := c.f.Wait()
				assert.LessOrEqual(t, runsOf(c.key), int32(1), "%s ran at most once", c.key)
				switch {
				case err == nil:
					assert.Equal(t, c.key+"!", out)
					assert.EqualValues(t, 1, runsOf(c.key), "%s has a result: it ran", c.key)
					results++
				case errors.Is(err, pool.ErrQueueFull):
					// No live node for a heartbeat (while nodes were killed,
					// on a machine busy enough to delay pongs): sent nowhere.
					assert.Zero(t, runsOf(c.key), "%s failed unsent, yet ran", c.key)
					failed++
				case errors.Is(err, pool.ErrNodeLost), errors.Is(err, pool.ErrTerminated),
					errors.Is(err, context.Canceled), errors.Is(err, pool.ErrClosed):
					failed++
				default:
					t.Errorf("an error outside the contract: %v", err)
				}
				c.cancel()
			}
			st := p.Stats()
			t.Logf("%d calls: %d results, %d errors; %d nodes killed; the rogue forged %d messages and was sent %d calls; %+v",
				len(calls), results, failed, killed, rogue.forged.Load(), rogue.calls.Load(), st)
			assert.EqualValues(t, len(calls), st.Submitted)
			assert.EqualValues(t, len(calls), st.Completed+st.Failed+st.Canceled, "each counted once: %+v", st)
			assert.EqualValues(t, results, st.Completed)

			observer := remotePool(t, connectAs(t, s, "svc"), "property", pool.Options{Workers: 1})
			waitNodes(t, observer, len(nodes))
			waitIdle(t, observer)
		})
	}
}
