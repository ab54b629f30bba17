package natsremote

import "strings"

// Permissions are the subjects a NATS user may publish and subscribe to,
// with NATS wildcards, as nats-server's authorization block (or
// embedded.User) lists them.
type Permissions struct {
	Publish, Subscribe []string
}

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
// subject token), answering submitters whose inboxes start with the
// prefixes given (none means DefaultInboxPrefix): take calls on the
// subjects of the nodes called name only, hear the requests to advertise,
// publish adverts, and answer on those inboxes.
//
// So a node's credentials can't read the calls (inputs, and the tokens
// that make an answer count) of another node name, and anything it sends
// another node's submitters without a call's token is ignored. It can
// still forge adverts, which submitters take as hints only (they ask the
// node itself), and answer wrongly the calls sent to it: a node runs the
// tasks it is sent, and is trusted with them.
func NodePermissions(pool, name string, inboxPrefixes ...string) Permissions {
	p := Permissions{
		Publish:   []string{advertSubject(pool)},
		Subscribe: []string{"offload." + pool + ".node." + subjectToken(name) + ".*", discoverSubject(pool)},
	}
	if len(inboxPrefixes) == 0 {
		inboxPrefixes = []string{""}
	}
	for _, prefix := range inboxPrefixes {
		p.Publish = append(p.Publish, inbox(prefix)+".>")
	}
	return p
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
