package embedded_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offloadgo/offload/natsremote/embedded"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServerWithoutListener(t *testing.T) {
	t.Parallel()
	s, err := embedded.Start(embedded.Options{MaxPayload: 4096})
	require.NoError(t, err)
	defer s.Shutdown()
	assert.Empty(t, s.ClientURL(), "no listener")
	nc, err := s.Connect()
	require.NoError(t, err)
	defer nc.Close()
	assert.EqualValues(t, 4096, nc.MaxPayload())
	sub, err := nc.SubscribeSync("x")
	require.NoError(t, err)
	require.NoError(t, nc.Publish("x", []byte("hi")))
	m, err := sub.NextMsg(10 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, "hi", string(m.Data))
}

func TestServerOnLoopback(t *testing.T) {
	t.Parallel()
	s, err := embedded.Start(embedded.Options{Listen: true})
	require.NoError(t, err)
	defer s.Shutdown()
	assert.True(t, strings.HasPrefix(s.ClientURL(), "nats://127.0.0.1:"), s.ClientURL())
	nc, err := nats.Connect(s.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.Flush())
}

// A cluster routes a message published on one server to a subscriber on
// another, and survives the loss of a server.
func TestCluster(t *testing.T) {
	t.Parallel()
	c, err := embedded.StartCluster(3, embedded.Options{})
	require.NoError(t, err)
	defer c.Shutdown()
	for _, u := range strings.Split(c.URLs(), ",") {
		assert.True(t, strings.HasPrefix(u, "nats://127.0.0.1:"), u)
	}
	sub, err := nats.Connect(c.Servers[0].ClientURL())
	require.NoError(t, err)
	defer sub.Close()
	pub, err := nats.Connect(c.Servers[1].ClientURL())
	require.NoError(t, err)
	defer pub.Close()
	s, err := sub.SubscribeSync("routed")
	require.NoError(t, err)
	require.NoError(t, sub.Flush())
	c.Servers[2].Shutdown()
	require.Eventually(t, func() bool {
		_ = pub.Publish("routed", []byte("x"))
		_, err := s.NextMsg(10 * time.Millisecond)
		return err == nil
	}, 10*time.Second, time.Millisecond, "the routes carry messages")

	_, err = embedded.StartCluster(1, embedded.Options{})
	assert.Error(t, err)
}

// A user with Responses may answer a request it receives, as often as
// MaxMsgs says, and publish nowhere else.
func TestUserResponses(t *testing.T) {
	t.Parallel()
	s, err := embedded.Start(embedded.Options{Users: []embedded.User{
		{Name: "asker", Password: "a", Publish: []string{"ask"}, Subscribe: []string{"_INBOX.>"}},
		{Name: "answerer", Password: "b", Subscribe: []string{"ask"}, Responses: &embedded.Responses{MaxMsgs: 1, Expires: time.Minute}},
	}})
	require.NoError(t, err)
	defer s.Shutdown()
	asker, err := s.Connect(nats.UserInfo("asker", "a"))
	require.NoError(t, err)
	defer asker.Close()
	refused := make(chan error, 4)
	answerer, err := s.Connect(nats.UserInfo("answerer", "b"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { refused <- err }))
	require.NoError(t, err)
	defer answerer.Close()
	sub, err := answerer.Subscribe("ask", func(m *nats.Msg) {
		_ = m.Respond([]byte("once"))
		_ = m.Respond([]byte("twice"))                      // over MaxMsgs
		_ = answerer.Publish(asker.NewInbox(), []byte("x")) // never received
	})
	require.NoError(t, err)
	defer sub.Unsubscribe()
	require.NoError(t, answerer.Flush())

	inbox := asker.NewInbox()
	replies, err := asker.SubscribeSync(inbox)
	require.NoError(t, err)
	require.NoError(t, asker.PublishRequest("ask", inbox, nil))
	m, err := replies.NextMsg(10 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, "once", string(m.Data))
	for range 2 {
		select {
		case err := <-refused:
			assert.ErrorContains(t, err, "Permissions Violation")
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not refuse a publish")
		}
	}
	_, err = replies.NextMsg(10 * time.Millisecond)
	assert.ErrorIs(t, err, nats.ErrTimeout, "nothing but the one answer")
}
