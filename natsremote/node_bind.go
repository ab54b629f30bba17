package natsremote

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/nats-io/nats.go"
)

// bind subscribes to the node's subjects and sends its first advert,
// asking the server after each whether it took it. NATS says it refused
// one (a permissions violation) only in an asynchronous error, and a
// node whose user lacks a right would otherwise say it serves and never
// join: bind returns that refusal, naming the subject and
// NodePermissions, matching nats.ErrPermissionViolation. The
// subscriptions it made are returned even with an error, for the caller
// to end.
func (s *nodeServer) bind() (calls, discover *nats.Subscription, err error) {
	subject := nodeSubject(s.o.Pool, s.name, s.suffix)
	before := s.nc.LastError()
	if calls, err = s.nc.Subscribe(subject, s.onMessage); err != nil {
		return nil, nil, fmt.Errorf("subscribe to %q: %w", subject, err)
	}
	if err = s.allowed("subscribe to", subject, before); err != nil {
		return calls, nil, err
	}
	subject, before = discoverSubject(s.o.Pool), s.nc.LastError()
	if discover, err = s.nc.Subscribe(subject, func(*nats.Msg) { s.advertSoon() }); err != nil {
		return calls, nil, fmt.Errorf("subscribe to %q: %w", subject, err)
	}
	if err = s.allowed("subscribe to", subject, before); err != nil {
		return calls, discover, err
	}
	before = s.nc.LastError()
	s.advertise()
	return calls, discover, s.allowed("publish on", advertSubject(s.o.Pool), before)
}

// allowed waits for the server to have read what the node just asked of
// it (a round trip) and returns the server's refusal, if any: a
// permissions violation naming subject that came after before, the
// connection's last error when the node asked.
func (s *nodeServer) allowed(what, subject string, before error) error {
	if err := s.nc.FlushTimeout(bindTimeout); err != nil {
		return err
	}
	err := s.nc.LastError()
	// errors.Is first: then err is the pointer nats.go made, and == can't
	// panic on an incomparable error.
	if !errors.Is(err, nats.ErrPermissionViolation) || err == before || !strings.Contains(err.Error(), `"`+subject+`"`) {
		return nil
	}
	return fmt.Errorf("NATS refused to let it %s %q: its user needs the permissions NodePermissions(%q, %q) lists: %w",
		what, subject, s.o.Pool, s.name, err)
}

// maxPongedTo bounds pongedTo: the submitters a node hears from in a
// heartbeat are few, and a refusal recurs with the next ping.
const maxPongedTo = 64

// refusedPublish reads the subject of a refused publish in a permissions
// violation's text.
var refusedPublish = regexp.MustCompile(`Publish to "(\S+)"`)

// reportRefusedAnswers logs, once a heartbeat, a refusal by NATS of a
// pong the node sent: its user may not answer on that submitter's inbox
// (NodePermissions grants it through allow_responses), so that submitter
// never takes it for a node. bind can't check that right: the inboxes are
// the submitters' own, and known only when they ping.
func (s *nodeServer) reportRefusedAnswers() {
	s.mu.Lock()
	ponged := s.pongedTo
	s.pongedTo = map[string]bool{}
	s.mu.Unlock()
	err := s.nc.LastError()
	if !errors.Is(err, nats.ErrPermissionViolation) || err == s.lastRefusal {
		return
	}
	s.lastRefusal = err
	m := refusedPublish.FindStringSubmatch(err.Error())
	if m == nil || !ponged[m[1]] {
		return
	}
	s.o.Logger.Error(fmt.Sprintf("natsremote: NATS refused the node's answer to a submitter: its user may not answer on the submitter's inbox; "+
		"it needs the permissions NodePermissions(%q, %q) lists, allow_responses included", s.o.Pool, s.name),
		"pool", s.o.Pool, "node", s.id, "subject", m[1], "err", err)
}
