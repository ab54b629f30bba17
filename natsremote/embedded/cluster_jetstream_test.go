package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote/embedded"
)

// A cluster with a store directory runs clustered JetStream, each server
// on a directory of its own: a stream of three replicas keeps taking
// messages with one server stopped, and the server, restarted on its
// ports and directory, catches up with what it missed.
func TestClusterJetStreamSurvivesAServerRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	c, err := embedded.StartCluster(3, embedded.Options{StoreDir: dir})
	require.NoError(t, err)
	defer c.Shutdown()
	for i := range c.Servers {
		_, err := os.Stat(filepath.Join(dir, "offload-embedded-"+strconv.Itoa(i), "jetstream"))
		require.NoError(t, err, "server %d stores in a directory of its own", i)
	}
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond))
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Replicas: 3})
	require.NoError(t, err)
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			require.Eventually(t, func() bool {
				_, err := js.Publish(ctx, "s."+strconv.Itoa(i), []byte("x"), jetstream.WithMsgID(strconv.Itoa(i)))
				return err == nil
			}, 30*time.Second, 50*time.Millisecond, "publish %d", i)
		}
	}
	publish(0, 50)

	urls := c.URLs()
	c.Servers[1].Shutdown()
	assert.Equal(t, urls, c.URLs(), "a stopped server keeps its URL")
	publish(50, 100)
	require.NoError(t, c.Restart(1))
	assert.Equal(t, urls, c.URLs(), "restarted on its ports")

	// Every replica, the restarted one too, is current and holds all 100.
	require.Eventually(t, func() bool {
		info, err := stream.Info(ctx)
		if err != nil || info.Cluster == nil || len(info.Cluster.Replicas) != 2 || info.State.Msgs != 100 {
			return false
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current || r.Offline {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "the restarted server catches up")
	only, err := nats.Connect(c.Servers[1].ClientURL())
	require.NoError(t, err)
	defer only.Close()
	direct, err := jetstream.New(only)
	require.NoError(t, err)
	info, err := direct.AccountInfo(ctx)
	require.NoError(t, err, "the restarted server serves JetStream")
	assert.Equal(t, 1, info.Streams)

	assert.ErrorContains(t, c.Restart(3), "no server 3")
	assert.True(t, strings.HasPrefix(c.Servers[1].ClientURL(), "nats://127.0.0.1:"))
}
