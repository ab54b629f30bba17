package natsremote

import (
	"context"
	"fmt"
	"strings"

	"github.com/offloadgo/offload/internal/blobjson"
	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/pool"
)

// A node whose pool runs a program of another language (Local's
// Subprocess.Command) serves the tasks the program's hello lists, and no
// Go task; a node of Go workers serves no program's task. It passes a
// program's input and output through as they came (wire_program.go): it
// needs no Go type of the task, and checks no fingerprint.

// programOf is the command line of the program o's pool runs, "" for Go
// workers.
func programOf(o pool.Options) string {
	if o.Isolation != pool.Subprocess {
		return ""
	}
	return strings.Join(o.Subprocess.Command, " ")
}

// programSubmit is how a call to the program's task with input, a
// program value, goes to the node's pool; an error says why the node
// lacks the task: the answer "unknown". The pool refuses, the same way
// (pool.ErrUnknownTask), a task its program's latest hello did not list.
func (s *nodeServer) programSubmit(task string, input []byte) (submitFunc, error) {
	if s.program == "" {
		return nil, fmt.Errorf("node %s runs Go tasks; task %q is served by a program of another language (pool.Extern)", s.id, task)
	}
	return func(ctx context.Context, freed func()) (func() (any, error), error) {
		in, err := parseProgramValue(input)
		if err != nil {
			return nil, fmt.Errorf("pool: decode input of task %q: %w", task, err)
		}
		wait, err := s.local.Forward(ctx, task, in, freed)
		if err != nil {
			return nil, err
		}
		return func() (any, error) { return wait() }, nil
	}, nil
}

// programOutput puts a program's output after msg's header: a program
// value, as the program sent it.
func (s *nodeServer) programOutput(msg []byte, out any) []byte {
	v, _ := out.(blobjson.Raw)
	body := appendProgramValue(append(make([]byte, 0, len(msg)+programValueLen(v)), msg...), v)
	if limit := s.nc.MaxPayload(); int64(len(body)) > limit {
		return kindOf(fmt.Appendf(msg[:headerLen], "output is %d bytes with its header, over the NATS connection's maximum payload %d", len(body), limit), answerKind(outcome.TooLarge))
	}
	return kindOf(body, answerKind(outcome.Result))
}

// fitRaised is the body of an exception's answer: its JSON (see
// outcome.Raised), the message and traceback cut to fit the connection's
// maximum payload.
func (s *nodeServer) fitRaised(re *pool.RemoteError) []byte {
	return fitRaised(re.Type, re.Message, re.Traceback, s.bodyLimit())
}

// fitRaised is the JSON of an exception of type typ with message and
// traceback, in at most limit bytes if it can be: the traceback is cut
// first, then the message, each saying so; typ is kept whole.
func fitRaised(typ, message, traceback string, limit int) []byte {
	body := outcome.Raise(typ, message, traceback).Body
	for room := limit; len(body) > limit && room > 0; room /= 2 {
		// JSON escapes can make a text longer: cut until it fits.
		m := cut([]byte(message), room/4)
		tb := cut([]byte(traceback), room/2)
		body = outcome.Raise(typ, string(m), string(tb)).Body
	}
	return body
}
