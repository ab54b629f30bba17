package budget

import (
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
)

// TestNetpollYieldLetsTheNetworkInOnOneP runs a loop on the only P while a
// goroutine waits in the netpoller for bytes that are already there. With
// NetpollYield the reader runs at the loop's first yield. (With
// runtime.Gosched it would wait for sysmon's poll, 10 ms, which is two
// yields of 5 ms chunks later.) Not parallel: it sets GOMAXPROCS.
func TestNetpollYieldLetsTheNetworkInOnOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()

	var yields atomic.Int32
	wokeAt := make(chan int32, 1)
	go func() {
		var b [1]byte
		_, err := server.Read(b[:])
		assert.NoError(t, err)
		wokeAt <- yields.Load()
	}()
	testkit.WaitBlocked(t, "IO wait", 10*time.Second, "TestNetpollYieldLetsTheNetworkInOnOneP.func")
	_, err = client.Write([]byte{1})
	require.NoError(t, err)

	opts := Options{Budget: 5 * time.Millisecond, Yield: func() { yields.Add(1); NetpollYield() }}
	_, err = Loop(context.Background(), 40, func(int) { spin(time.Millisecond) }, opts)
	require.NoError(t, err)
	assert.LessOrEqual(t, <-wokeAt, int32(2), "the yield at which the reader ran, of %d", yields.Load())
}
