// Package embedded runs a NATS server inside the process: the
// single-machine default for Remote pools and durable jobs (natsjobs), and
// the servers their tests need. By default the server has no listener at
// all and is reached only through Connect's in-process connection; on
// request it also listens on 127.0.0.1, alone or in a cluster of servers
// routed over loopback, and runs JetStream on a store directory. It is
// the only package of the module that links the NATS server: a program
// that connects to a NATS system of its own need not import it.
package embedded

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Options configure a Server. The zero value is a server without a
// listener and with the NATS defaults.
type Options struct {
	// Listen makes the server accept TCP clients too, on 127.0.0.1 (see
	// ClientURL): for worker nodes in other processes of this machine.
	// It never listens on another address.
	Listen bool
	// Port is the port Listen listens on; 0 means one the kernel picks.
	Port int
	// MaxPayload is the largest message the server takes, in bytes. 0
	// means the NATS default, 1 MiB.
	MaxPayload int32
	// Users, when set, are the only clients the server accepts (by name
	// and password: nats.UserInfo, or nats://user:pass@ in a URL), each
	// with the subjects it may publish and subscribe to. nil means no
	// authentication and every subject for everyone.
	Users []User
	// TLS, when set, makes the listener speak TLS only, with this
	// configuration (its Certificates; with ClientAuth
	// tls.RequireAndVerifyClientCert and ClientCAs, clients must show a
	// certificate). Connect's in-process connection does not use it.
	TLS *tls.Config
	// StoreDir, when set, runs JetStream, keeping its streams in this
	// directory (created if missing): what natsjobs needs. A server
	// started again on the same directory (Restart, or Start in another
	// process) finds the streams as they were stored. "" means no
	// JetStream. A Cluster does not take it.
	StoreDir string
}

// User is a NATS user of a Server, and what it may do: the subjects (with
// NATS wildcards) it may publish and subscribe to, and the answers it may
// send. nil lists allow nothing. natsremote.SubmitterPermissions and
// NodePermissions give the least a Remote pool's users need.
type User struct {
	Name, Password string
	// NKey, when set, is the user's NKey public key ("U…"): it then
	// authenticates by signing with its seed (nats.Nkey,
	// nats.NkeyOptionFromSeed), with no name or password.
	NKey               string
	Publish, Subscribe []string
	// Responses, when set, also lets the user publish on the reply
	// subject of each message it receives, besides Publish (nats-server's
	// allow_responses). nil allows nothing beyond Publish.
	Responses *Responses
}

// Responses is how a user may answer the messages it receives: at most
// MaxMsgs messages on each one's reply subject, within Expires of
// receiving it. Zero fields mean nats-server's defaults: one message,
// two minutes.
type Responses struct {
	MaxMsgs int
	Expires time.Duration
}

// startTimeout bounds a server's start.
const startTimeout = 10 * time.Second

// Server is a NATS server running in this process. Make it with Start;
// end it with Shutdown. Safe for concurrent use.
type Server struct {
	o         Options
	configure func(*server.Options)

	mu sync.Mutex
	s  *server.Server
	// ports are those the first start listened on (the kernel's picks),
	// which a Restart listens on again.
	ports listenPorts
}

// listenPorts are a server's client and route ports; 0 for none.
type listenPorts struct{ client, cluster int }

// Start starts a server and returns once it takes connections (at most
// 10 s). It starts no goroutine that Shutdown does not end, but one: a
// stream that sources another (a natsjobs queue's work stream does)
// waits for its source's consumer in a goroutine of nats-server's that
// ends only on an answer or after 30 s: a leak check must allow it.
func Start(o Options) (*Server, error) {
	return start(o, nil)
}

func start(o Options, configure func(*server.Options)) (*Server, error) {
	s, err := run(o, configure)
	if err != nil {
		return nil, err
	}
	return &Server{o: o, configure: configure, s: s, ports: portsOf(s)}, nil
}

// portsOf is where s listens, for clients and for routes.
func portsOf(s *server.Server) listenPorts {
	var p listenPorts
	if addr, ok := s.Addr().(*net.TCPAddr); ok {
		p.client = addr.Port
	}
	if addr := s.ClusterAddr(); addr != nil {
		p.cluster = addr.Port
	}
	return p
}

// run starts a NATS server as o and configure say and returns once it
// takes connections.
func run(o Options, configure func(*server.Options)) (*server.Server, error) {
	opts := &server.Options{
		ServerName: "offload-embedded",
		Host:       "127.0.0.1",
		Port:       cmp.Or(o.Port, server.RANDOM_PORT),
		DontListen: !o.Listen,
		MaxPayload: o.MaxPayload,
		NoLog:      true,
		NoSigs:     true,
	}
	for _, u := range o.Users {
		perms := &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: allowed(u.Publish)},
			Subscribe: &server.SubjectPermission{Allow: allowed(u.Subscribe)},
		}
		if r := u.Responses; r != nil {
			perms.Response = &server.ResponsePermission{MaxMsgs: r.MaxMsgs, Expires: r.Expires}
		}
		if u.NKey != "" {
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: u.NKey, Permissions: perms})
			continue
		}
		opts.Users = append(opts.Users, &server.User{Username: u.Name, Password: u.Password, Permissions: perms})
	}
	if o.TLS != nil {
		opts.TLSConfig, opts.TLS, opts.TLSTimeout = o.TLS, true, 5
		opts.TLSVerify = o.TLS.ClientAuth == tls.RequireAndVerifyClientCert
	}
	if o.StoreDir != "" {
		opts.JetStream, opts.StoreDir = true, o.StoreDir
	}
	if configure != nil {
		configure(opts)
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(startTimeout) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, errors.New("embedded: the NATS server did not start within 10 s")
	}
	return s, nil
}

// Restart stops the server, as Shutdown does (if it runs: a server
// stopped by Shutdown starts again), and starts it with the same
// options, on the same ports if it listens (the ones the kernel picked,
// if Port was 0; in a Cluster, its route port too) and on the same store
// directory: clients that reconnect by URL find it where it was, the
// other servers of a Cluster route to it again, and JetStream finds its
// streams as they were stored. Connections made by Connect end with the
// old server; make new ones. It returns once the new server takes
// connections (at most 10 s); on an error the server stays stopped.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.o
	if s.ports.client != 0 {
		o.Port = s.ports.client
	}
	s.s.Shutdown()
	s.s.WaitForShutdown()
	configure := s.configure
	if port := s.ports.cluster; port != 0 {
		configure = func(opts *server.Options) {
			s.configure(opts)
			opts.Cluster.Port = port
		}
	}
	ns, err := run(o, configure)
	if err != nil {
		return err
	}
	s.s = ns
	return nil
}

// current is the running NATS server: another after a Restart.
func (s *Server) current() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

// allowed is a permission's allow list: nats-server reads an empty one as
// "everything", which is not what an empty list says here.
func allowed(subjects []string) []string {
	if len(subjects) == 0 {
		return []string{"_offload_embedded_nothing_"}
	}
	return subjects
}

// Connect returns a connection to the server through memory, whether it
// listens or not. opts are nats.Connect's; the connection is the
// caller's to close, before Shutdown.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	return nats.Connect("", append([]nats.Option{nats.InProcessServer(s.current())}, opts...)...)
}

// ClientURL is the URL other processes connect to (nats://127.0.0.1:port),
// or "" for a server without a listener. It stays while the server is
// stopped, and across a Restart.
func (s *Server) ClientURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports.client == 0 {
		return ""
	}
	return fmt.Sprintf("nats://127.0.0.1:%d", s.ports.client)
}

// Shutdown stops the server, closing its connections, and returns once
// it has stopped. It is idempotent.
func (s *Server) Shutdown() {
	ns := s.current()
	ns.Shutdown()
	ns.WaitForShutdown()
}
