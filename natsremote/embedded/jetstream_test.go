package embedded_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/natsremote/embedded"
)

// A server with a store directory runs JetStream; restarted on it, it
// keeps what was stored, on the same port, and clients that reconnect by
// URL carry on.
func TestJetStreamSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := embedded.Start(embedded.Options{Listen: true, StoreDir: t.TempDir()})
	require.NoError(t, err)
	defer s.Shutdown()
	url := s.ClientURL()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond))
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}})
	require.NoError(t, err)
	for i := range 100 {
		_, err := js.Publish(ctx, "s."+strconv.Itoa(i), []byte("x"))
		require.NoError(t, err)
	}

	require.NoError(t, s.Restart())
	assert.Equal(t, url, s.ClientURL(), "the same port")
	var stream jetstream.Stream
	require.Eventually(t, func() bool {
		stream, err = js.Stream(ctx, "S")
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "the client reconnects and finds the stream")
	info, err := stream.Info(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 100, info.State.Msgs)

	inProcess, err := s.Connect()
	require.NoError(t, err, "Connect reaches the new server")
	defer inProcess.Close()
	require.NoError(t, inProcess.Flush())
}

func TestServerWithoutStoreDirHasNoJetStream(t *testing.T) {
	t.Parallel()
	s, err := embedded.Start(embedded.Options{})
	require.NoError(t, err)
	defer s.Shutdown()
	nc, err := s.Connect()
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	assert.ErrorIs(t, err, jetstream.ErrJetStreamNotEnabled)
}
