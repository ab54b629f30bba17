package natsjobs

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pulledMsg is a job's message as the puller's subscription got it, with
// the acks of a jetstream.Msg (made by its reply subject).
type pulledMsg struct{ m *nats.Msg }

var _ jetstream.Msg = pulledMsg{}

func (p pulledMsg) Data() []byte                        { return p.m.Data }
func (p pulledMsg) Headers() nats.Header                { return p.m.Header }
func (p pulledMsg) Subject() string                     { return p.m.Subject }
func (p pulledMsg) Reply() string                       { return p.m.Reply }
func (p pulledMsg) Ack() error                          { return p.m.Ack() }
func (p pulledMsg) DoubleAck(ctx context.Context) error { return p.m.AckSync(nats.Context(ctx)) }
func (p pulledMsg) Nak() error                          { return p.m.Nak() }
func (p pulledMsg) NakWithDelay(d time.Duration) error  { return p.m.NakWithDelay(d) }
func (p pulledMsg) InProgress() error                   { return p.m.InProgress() }
func (p pulledMsg) Term() error                         { return p.m.Term() }

// TermWithReason terminates the message with reason, which the server's
// advisory carries (the legacy nats.Msg has no such ack).
func (p pulledMsg) TermWithReason(reason string) error {
	return p.m.Respond([]byte("+TERM " + reason))
}

func (p pulledMsg) Metadata() (*jetstream.MsgMetadata, error) {
	md, err := p.m.Metadata()
	if err != nil {
		return nil, err
	}
	return &jetstream.MsgMetadata{
		Sequence:     jetstream.SequencePair{Consumer: md.Sequence.Consumer, Stream: md.Sequence.Stream},
		NumDelivered: md.NumDelivered,
		NumPending:   md.NumPending,
		Timestamp:    md.Timestamp,
		Stream:       md.Stream,
		Consumer:     md.Consumer,
		Domain:       md.Domain,
	}, nil
}
