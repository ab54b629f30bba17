package pool

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertProbe asks h once and checks its answer.
func assertProbe(t *testing.T, h http.Handler, code int, body string, msgAndArgs ...any) {
	t.Helper()
	gotCode, gotBody := probe(h)
	assert.Equal(t, code, gotCode, msgAndArgs...)
	assert.Equal(t, body, gotBody, msgAndArgs...)
}

// Ready, given CPU slots and no pool, says not ready from the moment
// every running and waiting place is taken until nobody waits: a
// handler's end that leaves a request waiting keeps it not ready (no
// flapping while a queue lasts); the end or the giving up that leaves
// nobody waiting makes it ready again.
func TestReadyOnCPUSlotsOverloaded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fx := newCPUFixture(CPUOptions{MaxRunning: 2, MaxQueue: 2})
		h := Ready(ReadyOptions{CPU: []*CPUSlots{fx.slots}})
		busy := func(running, waiting int) string {
			return fmt.Sprintf("not ready: CPU slots 1 of 1 overloaded (%d running, %d waiting)\n", running, waiting)
		}

		ctx := t.Context()
		assertProbe(t, h, http.StatusOK, "ready\n", "empty slots")
		a, b := fx.serve(ctx, "a"), fx.serve(ctx, "b")
		assertProbe(t, h, http.StatusOK, "ready\n", "both running, none waiting")
		c := fx.serve(ctx, "c")
		assertProbe(t, h, http.StatusOK, "ready\n", "a waiting place is free")
		assert.False(t, fx.slots.Full())
		assert.False(t, fx.slots.Overloaded())

		waitCtx, giveUp := context.WithCancel(ctx)
		d := fx.serve(waitCtx, "d")
		assert.True(t, fx.slots.Full())
		assertProbe(t, h, http.StatusServiceUnavailable, busy(2, 2), "every place taken")
		assertCPUShed(t, <-fx.serve(ctx, "e"), "1")
		assertProbe(t, h, http.StatusServiceUnavailable, busy(2, 2), "a shed request leaves the count alone")
		assert.Equal(t, []string{"a", "b"}, fx.startedNow(), "a probe takes no slot")

		fx.finish("a")
		assert.Equal(t, http.StatusOK, (<-a).Code)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b", "c"}, fx.startedNow())
		assert.False(t, fx.slots.Full())
		assertProbe(t, h, http.StatusServiceUnavailable, busy(2, 1), "a's end left d waiting")

		giveUp()
		assertCPUShed(t, <-d, "1")
		assertProbe(t, h, http.StatusOK, "ready\n", "d gave up: nobody waits")

		f, g := fx.serve(ctx, "f"), fx.serve(ctx, "g")
		assertProbe(t, h, http.StatusServiceUnavailable, busy(2, 2), "f and g took the waiting places")
		fx.finish("b")
		assert.Equal(t, http.StatusOK, (<-b).Code)
		synctest.Wait()
		assertProbe(t, h, http.StatusServiceUnavailable, busy(2, 1), "b's end left g waiting")
		fx.finish("c")
		assert.Equal(t, http.StatusOK, (<-c).Code)
		synctest.Wait()
		assertProbe(t, h, http.StatusOK, "ready\n", "c's end: f and g run, nobody waits")

		for _, name := range []string{"f", "g"} {
			fx.finish(name)
		}
		for _, done := range []<-chan *httptest.ResponseRecorder{f, g} {
			assert.Equal(t, http.StatusOK, (<-done).Code)
		}
		synctest.Wait()
		assertProbe(t, h, http.StatusOK, "ready\n", "all done")
	})
}

// With NoQueue the slots are overloaded exactly while every running slot
// is taken; of several, the first overloaded is named.
func TestReadyOnSeveralCPUSlots(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		idle := NewCPUSlots(CPUOptions{MaxRunning: 1})
		fx := newCPUFixture(CPUOptions{MaxRunning: 1, MaxQueue: NoQueue})
		h := Ready(ReadyOptions{CPU: []*CPUSlots{idle, fx.slots}})
		assertProbe(t, h, http.StatusOK, "ready\n")
		a := fx.serve(t.Context(), "a")
		assertProbe(t, h, http.StatusServiceUnavailable, "not ready: CPU slots 2 of 2 overloaded (1 running, 0 waiting)\n")
		fx.finish("a")
		<-a
		assertProbe(t, h, http.StatusOK, "ready\n")
	})
}

// Pools, slots and the lag together: each can make the process not
// ready, the lag named first, then the pools, then the slots.
func TestReadyOnPoolsAndCPUSlots(t *testing.T) {
	t.Parallel()
	slots := NewCPUSlots(CPUOptions{MaxRunning: 1, MaxQueue: NoQueue})
	var lag fakeLag
	p := idlePool(t)
	h := readyOn(ReadyOptions{MaxLag: 20 * time.Millisecond, CPU: []*CPUSlots{slots}}, &lag, p)
	assertProbe(t, h, http.StatusOK, "ready\n")

	require.Zero(t, slots.acquire(t.Context()), "a handler runs")
	defer slots.release()
	assertProbe(t, h, http.StatusServiceUnavailable, "not ready: CPU slots 1 of 1 overloaded (1 running, 0 waiting)\n")
	lag.set(time.Second)
	code, body := probe(h)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "not ready: process lags")

	full := newShedFixture(t, Options{Workers: 1, MaxQueue: 1}, 1, 1, ShedOptions{})
	h = readyOn(ReadyOptions{CPU: []*CPUSlots{slots}}, &lag, full.pool)
	assertProbe(t, h, http.StatusServiceUnavailable, "not ready: pool 1 of 1 would shed (queue full)\n")
}

// Ready refuses, at start-up, to check nothing, nil slots, and a lag it
// could not keep sampled; CPU slots alone are enough.
func TestReadyCPUSlotsRules(t *testing.T) {
	t.Parallel()
	slots := NewCPUSlots(CPUOptions{})
	const nothing = "pool: Ready has nothing to check: give it a pool or CPU slots"
	assert.PanicsWithValue(t, nothing, func() { Ready(ReadyOptions{CPU: []*CPUSlots{}}) })
	assert.PanicsWithValue(t, nothing, func() { Ready(ReadyOptions{MaxLag: time.Second}) })
	assert.PanicsWithValue(t, "pool: Ready of a nil *CPUSlots", func() {
		Ready(ReadyOptions{CPU: []*CPUSlots{slots, nil}})
	})
	assert.PanicsWithValue(t, "pool: Ready's MaxLag needs a pool: the lag is sampled only while one is open", func() {
		Ready(ReadyOptions{MaxLag: time.Second, CPU: []*CPUSlots{slots}})
	})

	assert.NotPanics(t, func() { Ready(ReadyOptions{CPU: []*CPUSlots{slots}}) }, "slots alone")
	var lag fakeLag
	assert.NotPanics(t, func() {
		readyOn(ReadyOptions{MaxLag: time.Second, CPU: []*CPUSlots{slots}}, &lag, idlePool(t))
	}, "MaxLag beside slots, with a pool")
	assert.EqualValues(t, 1, lag.watches.Load(), "the pool keeps the lag sampled")
}
