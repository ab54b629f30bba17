package natsremote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/offloadgo/offload/pool"
)

// Serve makes this process a worker node of the Remote pools named
// o.Pool, on nc's NATS system: it runs their calls through a pool of its
// own, made from o.Local, and advertises its free slots every
// o.Heartbeat. It blocks until ctx ends or nc closes, then leaves: it
// advertises that it does, answers new calls "full" (their submitters try
// other nodes) and pings (the submitters of its running calls wait for
// them), gives running calls o.Drain (DefaultDrain unless set) to finish
// and closes its pool under the rest, whose callers get pool.ErrNodeLost;
// once nc has closed, no answer could go out, and it closes its pool at
// once. It returns once every call has ended — an InProcess task that
// ignores its ctx holds it until the task returns — with nil when ctx
// ended, or why it could not serve (invalid options, a closed
// connection). A node whose NATS user may not subscribe to its subjects
// or publish its adverts (see NodePermissions) could never join a pool:
// Serve returns at once an error that names the subject refused and
// matches nats.ErrPermissionViolation. One that may not answer its
// submitters logs an error naming the inbox when NATS refuses an answer.
// nc stays the caller's.
//
// Every task registered in the binary (pool.Register at package level) is
// served; a call for a task the node lacks, or whose In or Out type
// differs from the submitter's (another build), is refused and never
// runs. A node whose o.Local has a Subprocess.Command serves instead the
// tasks its program's hello lists (pool.Extern's; see "Tasks of other
// programs" in the package doc): Serve first starts the program to hear
// them, and returns the error if it does not start. Any number of nodes may serve one pool; each has a unique ID (see
// ServeOptions.Name). Serve may run more than once at a time, on one
// connection or several: each is a node of its own.
//
// With o.Local.Tracer set, each task continues the trace its caller's pool
// sent with the call (see pool.Tracer): its ctx holds the caller's trace
// context, and the node's pool gives it a span of its own under it.
func Serve(ctx context.Context, nc *nats.Conn, o ServeOptions) error {
	if nc == nil {
		return errors.New("natsremote: Serve with a nil *nats.Conn")
	}
	if err := o.fillDefaults(); err != nil {
		return err
	}
	local, err := pool.New(o.Local)
	if err != nil {
		return fmt.Errorf("natsremote: the node's pool: %w", err)
	}
	program := programOf(local.Options())
	var tasks []string
	if program != "" {
		if tasks, err = local.ProgramTasks(ctx); err != nil {
			_ = local.Close()
			_ = local.Shutdown(context.Background()) // its workers' exit
			return fmt.Errorf("natsremote: the node's pool: %w", err)
		}
	}
	name, suffix := nodeName(o.Name)
	s := &nodeServer{
		nc:      nc,
		o:       o,
		name:    name,
		suffix:  suffix,
		id:      name + "-" + suffix,
		local:   local,
		program: program,
		tasks:   tasks,
		calls:   map[uint64]*nodeCall{},

		pongedTo: map[string]bool{},
	}
	return s.serve(ctx)
}

// nodeServer is a worker node: its subscriptions, its pool, and the calls
// it runs (see node_calls.go).
type nodeServer struct {
	nc           *nats.Conn
	o            ServeOptions
	name, suffix string
	id           string // name-suffix
	local        *pool.Pool
	// program is the command line of the program local runs, "" for Go
	// workers; tasks, the tasks its hello listed as the node started.
	program string
	tasks   []string

	mu    sync.Mutex
	calls map[uint64]*nodeCall // by token
	// leaving: the node answers every new call "full".
	leaving bool
	// owesAdvert: the node has said it has no room (a "full" answer, or an
	// answer, pong or advert with no free slot) and no advert with room in
	// it has gone out since. A submitter may be waiting on that word, so
	// the next slot that frees is advertised at once, not at the next
	// heartbeat. It is set with the figure it goes with, under mu, which
	// slotFreed takes too: a slot freed before is in the figure, one freed
	// after finds the flag.
	owesAdvert bool
	// advertAt is when the last advert went out, and soon the timer of
	// one due (see advertSoon).
	advertAt time.Time
	soon     *time.Timer
	running  sync.WaitGroup // the calls' goroutines
	// ignored counts messages that did not parse, reported once a
	// heartbeat: a flood of garbage is a log line, not one per message.
	ignored atomic.Uint64
	// pongedTo holds where the pongs of this heartbeat went, and
	// lastRefusal the connection's error last looked at: see
	// reportRefusedAnswers.
	pongedTo    map[string]bool
	lastRefusal error
}

func (s *nodeServer) serve(ctx context.Context) error {
	calls, discover, err := s.bind()
	if err != nil {
		// Refused, or no round trip: no submitter should have heard of
		// the node, but one that did gets "full", and what ran ends.
		s.stopTaking()
		for _, sub := range []*nats.Subscription{calls, discover} {
			if sub != nil {
				_ = sub.Unsubscribe()
			}
		}
		_ = s.local.Close()
		_ = s.local.Shutdown(context.Background()) // its workers' exit
		s.running.Wait()
		return fmt.Errorf("natsremote: node %s: %w", s.id, err)
	}
	if s.program != "" {
		s.o.Logger.Info("natsremote: serving", "pool", s.o.Pool, "node", s.id, "workers", s.local.Options().Workers, "program", s.program, "tasks", s.tasks)
	} else {
		s.o.Logger.Info("natsremote: serving", "pool", s.o.Pool, "node", s.id, "workers", s.local.Options().Workers)
	}
	err = s.advertiseUntil(ctx)
	_ = discover.Unsubscribe()
	s.leave(err == nil)
	_ = calls.Unsubscribe()
	_ = s.nc.FlushTimeout(time.Second) // the last answers
	if err != nil {
		return fmt.Errorf("natsremote: node %s: %w", s.id, err)
	}
	return nil
}

// advertiseUntil advertises every heartbeat (bind sent the first advert)
// until ctx ends (nil) or the connection closes (errConnClosed).
func (s *nodeServer) advertiseUntil(ctx context.Context) error {
	t := time.NewTicker(s.o.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
		if s.nc.IsClosed() {
			return errConnClosed
		}
		s.advertise()
		if n := s.ignored.Swap(0); n > 0 {
			s.o.Logger.Warn("natsremote: ignored messages that did not parse", "pool", s.o.Pool, "node", s.id, "count", n)
		}
		s.reportRefusedAnswers()
	}
}

// advertGap is the least time between two adverts that are not the
// heartbeat's: a flood of discover requests, or of slots freeing, draws
// one advert per gap.
func (s *nodeServer) advertGap() time.Duration {
	return min(max(s.o.Heartbeat/10, minHeartbeat/2), 100*time.Millisecond)
}

// advertSoon advertises now, or at the end of the gap since the last
// advert if that is later; adverts asked for meanwhile are that one.
func (s *nodeServer) advertSoon() {
	s.mu.Lock()
	if s.soon != nil || s.leaving {
		s.mu.Unlock()
		return // one is due already
	}
	wait := s.advertGap() - time.Since(s.advertAt)
	if wait > 0 {
		s.soon = time.AfterFunc(wait, func() {
			s.mu.Lock()
			s.soon = nil
			s.mu.Unlock()
			s.advertise()
		})
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.advertise()
}

// advertise publishes the node's advert. Only an advert with room in it
// pays what owesAdvert owes; one without (a heartbeat's, a discover's
// while full) owes the next. It goes out under mu, as pongs and answers
// do, so that its figure is never older than one sent after it.
func (s *nodeServer) advertise() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advertAt = time.Now()
	st := s.status(s.leaving)
	s.owesAdvert = st.free == 0
	_ = s.nc.Publish(advertSubject(s.o.Pool), appendAdvert(nil, advert{status: st, name: s.name, suffix: s.suffix}))
}

// status is what the node says of itself in adverts and pongs. It takes
// no lock: the local pool's Load is lock-free.
func (s *nodeServer) status(leaving bool) status {
	l := s.local.Load()
	st := status{workers: l.Capacity, busy: l.Busy, free: freeOf(l), heartbeat: s.o.Heartbeat}
	if leaving {
		st.free, st.leaving = 0, true
	}
	return st
}

// free is how many calls the node would take now.
func (s *nodeServer) free() int { return freeOf(s.local.Load()) }

func freeOf(l pool.Load) int {
	if l.Closed {
		return 0
	}
	return max(l.Capacity-l.InFlight, 0)
}

// nodeName makes a node's name (from name, or the host's name) and the
// random suffix that makes its ID unique: subject tokens both.
func nodeName(name string) (string, string) {
	if name == "" {
		name, _ = os.Hostname()
	}
	if name = subjectToken(name); name == "" {
		name = "node"
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	return name, hex.EncodeToString(suffix[:])
}
