package natsjobs

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/natsremote"
)

// NATS says it refused a user's publish or subscription only in an
// asynchronous error, which the connection keeps as its last error: a
// request it refused waits out its ctx, a subscription it refused hears
// nothing. So where a refusal must be told at once, the code asks the
// server for a round trip (a flush) after asking it for something, then
// reads the connection's last error.

// refusal returns nc's last error if it is a refusal by the server that
// came after before, the last error when the code asked, and whose text
// says one of says (see publishOn and subscriptionTo).
func refusal(nc *nats.Conn, before error, says ...string) error {
	err := nc.LastError()
	// errors.Is first: then err is the pointer nats.go made, and == can't
	// panic on an incomparable error.
	if !errors.Is(err, nats.ErrPermissionViolation) || err == before {
		return nil
	}
	for _, s := range says {
		if strings.Contains(err.Error(), s) {
			return err
		}
	}
	return nil
}

func publishOn(subject string) string      { return `Publish to "` + subject + `"` }
func subscriptionTo(subject string) string { return `Subscription to "` + subject + `"` }

// readsOf says what a refusal to read stream's messages names: the
// request of a Direct Get (by subject or not), or of the API's Get.
func readsOf(stream string) []string {
	return []string{
		publishOn("$JS.API.DIRECT.GET." + stream), `Publish to "$JS.API.DIRECT.GET.` + stream + `.`,
		publishOn("$JS.API.STREAM.MSG.GET." + stream),
	}
}

// refusedOr returns, for a try that failed transiently (no answer in
// time: what a refused request meets), the server's refusal since before
// of a publish that says one of says (see refusal), which ends the tries
// (see through); otherwise err. It costs nothing when the try succeeds.
func refusedOr(nc *nats.Conn, before, err error, says ...string) error {
	if err != nil && transient(err) {
		if refused := refusal(nc, before, says...); refused != nil {
			return refused
		}
	}
	return err
}

// maxRefusalPoll bounds the pause between two looks for a refusal while
// a request is out.
const maxRefusalPoll = 100 * time.Millisecond

// request runs call, which asks the JetStream API on subjects, on the
// caller's goroutine, and returns the server's refusal of one of those
// requests (or of the subscription to the connection's inbox, where the
// answers come) as soon as the server makes it: NATS says so only in an
// asynchronous error, and the request would wait out ctx. So while call
// runs, request asks the server for a round trip every now and then (at
// 1 ms, then at pauses doubling to maxRefusalPoll), after which the
// connection's last error holds any refusal of what call sent before.
func (b *binder) request(ctx context.Context, call func(context.Context) error, subjects ...string) error {
	before := b.nc.LastError()
	callCtx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	watch, stopWatch := context.WithCancel(context.Background())
	var refused error
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if refused = b.watchForRefusal(watch, before, subjects); refused != nil {
			cancelCall()
		}
	}()
	err := call(callCtx)
	stopWatch()
	<-watched
	if err != nil && refused != nil {
		return refused
	}
	return err
}

// watchForRefusal returns the refusal of one of subjects, or of a
// subscription to the inbox, that came after before; nil once ctx ends.
func (b *binder) watchForRefusal(ctx context.Context, before error, subjects []string) error {
	inbox := cmp.Or(b.nc.Opts.InboxPrefix, natsremote.DefaultInboxPrefix)
	for pause := time.Millisecond; ; pause = min(2*pause, maxRefusalPoll) {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		flush, cancel := context.WithTimeout(ctx, time.Second)
		err := b.nc.FlushWithContext(flush)
		cancel()
		if err != nil {
			continue // the server is away, or ctx ended
		}
		says := []string{`Subscription to "` + inbox + `.`}
		for _, s := range subjects {
			says = append(says, publishOn(s))
		}
		if err := refusal(b.nc, before, says...); err != nil {
			return err
		}
	}
}
