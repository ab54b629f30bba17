package natsremote

import (
	"strings"
	"time"
)

// Permissions are what a NATS user may do, as nats-server's
// authorization block (or embedded.User) lists them: the subjects it may
// publish and subscribe to, with NATS wildcards, and the answers it may
// send to the messages it receives.
type Permissions struct {
	Publish, Subscribe []string
	// Responses, when set, also lets the user publish on the reply subject
	// of each message it receives (nats-server's allow_responses). nil
	// allows nothing beyond Publish.
	Responses *ResponsePermission
}

// ResponsePermission is how a user may answer the messages it receives:
// at most MaxMsgs messages on each one's reply subject, within Expires of
// receiving it. In nats-server's configuration it is allow_responses: {
// max: MaxMsgs, expires: "Expires" }; the server forgets a reply subject
// once it has had its answers or its window has passed.
type ResponsePermission struct {
	MaxMsgs int
	Expires time.Duration
}

// NodeResponseWindow is how long NodePermissions lets a node answer a
// call (or ping) after receiving it: longer than any call of a Remote
// pool should run.
const NodeResponseWindow = 24 * time.Hour

// DefaultInboxPrefix is the prefix of a NATS connection's inboxes unless
// it sets another (nats.CustomInboxPrefix).
const DefaultInboxPrefix = "_INBOX"

// SubmitterPermissions is the least a NATS user needs to run the Remote
// pool named pool over a connection whose inboxes start with inboxPrefix
// ("" means DefaultInboxPrefix): publish calls, cancels and pings to the
// nodes and ask them to advertise; hear their adverts and, on its inbox,
// their answers.
//
// Give each service its own inbox prefix (nats.CustomInboxPrefix) and
// user, and a user that may subscribe to other inboxes can't read its
// answers: the answers carry the task's output.
func SubmitterPermissions(pool, inboxPrefix string) Permissions {
	return Permissions{
		Publish:   []string{"offload." + pool + ".node.>", discoverSubject(pool)},
		Subscribe: []string{advertSubject(pool), inbox(inboxPrefix) + ".>"},
	}
}

// NodePermissions is the least a NATS user needs to serve the pool named
// pool as nodes named name (ServeOptions.Name, as Serve turns it into a
// subject token): take calls on the subjects of the nodes called name
// only, hear the requests to advertise, publish adverts, and answer each
// call and ping it receives once, within NodeResponseWindow (Responses),
// whatever the submitter's inbox. It may publish nothing else on an inbox.
//
// So a node's credentials can't read the calls (inputs, and the tokens
// that make an answer count) of another node name, nor send anything to a
// pool but adverts and one answer to each call or ping they got: the
// server refuses the rest. They can still forge adverts, which submitters
// take as hints only (they ask the node itself), and answer wrongly the
// calls sent to the nodes of their name — or say "full" or "no
// responders" of such a call, which then goes to another node, whether it
// ran or not: nodes run the tasks they are sent, and are trusted with
// them.
//
// A call that runs past the window can't be answered: the server refuses
// the answer, and its caller gets pool.ErrNodeLost once the node says it
// no longer has the call. For longer tasks, raise Responses.Expires.
// (Publish rights on the submitters' inboxes, PREFIX.>, in place of
// Responses carry answers of any age, but let the node send anything
// there: pools then ignore what lacks a call's or ping's secret, but must
// read it.)
func NodePermissions(pool, name string) Permissions {
	return Permissions{
		Publish:   []string{advertSubject(pool)},
		Subscribe: []string{"offload." + pool + ".node." + subjectToken(name) + ".*", discoverSubject(pool)},
		Responses: &ResponsePermission{MaxMsgs: 1, Expires: NodeResponseWindow},
	}
}

func inbox(prefix string) string {
	if prefix == "" {
		return DefaultInboxPrefix
	}
	return prefix
}

// subjectToken turns name into a subject token, as a node's name: each
// character a token can't hold becomes '_', and it is cut to 100 bytes.
func subjectToken(name string) string {
	name = strings.Map(func(r rune) rune {
		if r <= ' ' || r == '.' || r == '*' || r == '>' || r > '~' {
			return '_'
		}
		return r
	}, name)
	if len(name) > 100 {
		name = name[:100]
	}
	return name
}
