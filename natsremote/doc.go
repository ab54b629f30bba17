// Package natsremote runs a pool's tasks on worker nodes on other
// machines, over NATS: the pool's API, admission and cancellation carry
// over, and what can't be kept across a network is stated below.
//
// The submitter's side is a Transport for an Isolation pool.Remote pool:
//
//	t, err := natsremote.New(nc, natsremote.Options{Pool: "images"})
//	p, err := pool.New(pool.Options{Workers: 16, Isolation: pool.Remote, Transport: t})
//	out, err := pool.Run(ctx, p, Resize, in)
//
// A worker node is an ordinary pool on another host that serves the
// binary's registered tasks to the pools of that name:
//
//	err := natsremote.Serve(ctx, nc, natsremote.ServeOptions{
//		Pool:  "images",
//		Local: pool.Options{Workers: 8, Isolation: pool.Subprocess},
//	})
//
// or, with no code but Main (in place of pool.Main, first thing in main),
// with OFFLOAD_NATS_URL set (see EnvURL and the variables beside it).
// Package embedded runs a NATS server in the process, for a single
// machine.
//
// # Admission and dispatch
//
// Admission, the queue, QueueDelay, Shed, Load and Stats are the pool's,
// as for any pool: ErrQueueFull is decided locally and publishes nothing.
// A Remote pool's Workers caps its calls in flight (pool.Pool.SetWorkers
// changes it while the pool runs); its Load.Workers, Load.MaxWorkers and
// Load.Capacity are what its live nodes offer (their slots, capped by
// Workers); with no live node they are 0 and
// a call fails at once with an error matching ErrQueueFull (so Shed and
// WriteError answer 503) — except in the pool's first heartbeat, while it
// discovers its nodes, when a call waits up to a heartbeat for one. When
// nodes join (or are heard from again) and offer more slots, the callers
// blocked in pool.SubmitBlocking get the new room at once, without waiting
// for a call to end. Stats.MaxWorkers is Load.MaxWorkers, and
// Options.SlowTaskAfter's events name the node a slow task runs on.
//
// A worker goroutine that takes a task sends it to a node with a free
// slot, by power of two choices (never NATS queue groups, which pick at
// random), by node name first: of two random names with room, the one
// whose pick has more; within a name, the better of two random live nodes
// by their free slots less the pool's own calls sent since. So a name's
// share of the calls does not grow with its number of nodes, and the pool
// knows at most Options.MaxNodesPerName nodes of one name. A node admits
// without queueing: with no free slot it answers "full" and the pool
// tries another node (not that one again for this call until it reports
// anew), or waits for room until the task's ctx ends. That wait counts in
// Stats.WaitTime, not RunTime: a Remote task's run time starts when it is
// sent to the node that takes it (it includes the network's round trip),
// and Busy counts the worker goroutines waiting for a node. QueueDelay
// bounds that wait too: a task that finds no free slot within what
// QueueDelay left it after its time in the queue fails with an error
// matching ErrQueueFull, sent nowhere, and counts as Canceled, as
// QueueDelay's drops from the queue do. A node that answered "full" is
// sent at most one call per report (pong or answer) until it takes a call
// again, then one more per report for each call it takes: a node that
// keeps saying it has room and answering "full" draws a re-send per
// report, not one from every waiting call.
//
// # The contract
//
//   - An accepted call runs at most once. Once a node has taken a call it
//     is never sent again; there is no automatic retry. A call that no node
//     took (each answered "full" or "late", lacks the task, could not start
//     a worker process for it, or nobody subscribed on its subject) has
//     not run.
//   - A node whose worker process did not start for a call (a Subprocess
//     node's pool.ErrWorkerStartFailed) says so, and the call goes to
//     another node, never twice to that one. After three such nodes, or
//     when no other live node is left that has the task, it fails with an
//     error matching pool.ErrWorkerStartFailed (not ErrWorkerCrashed:
//     nothing ran; WriteError answers 503) naming the last node and its
//     account.
//   - Each Future resolves exactly once: with the result, the task's
//     error, or why it has none.
//   - ErrTerminated and ErrNodeLost mean "may have run": the call was
//     sent, and its outcome is unknown.
//   - When the caller's ctx ends, its Future resolves at once with an
//     error matching pool.ErrTerminated and ctx's error (or the plain ctx
//     error if no node had been sent it yet), and the node is told to
//     cancel the task: its ctx ends there, and a Subprocess node gives its
//     worker process TerminateGrace, then kills it. The ctx's deadline
//     travels with the call, so the node ends the task when it passes
//     even if the cancel is lost.
//   - No other value of the caller's ctx travels, but its trace context:
//     with pool.Options.Tracer set, the call carries it, and a node whose
//     ServeOptions.Local.Tracer is set (natsremote.Main's MainOptions)
//     gives it to the task, whose span on the node continues the caller's
//     trace.
//   - Only a node's pongs and its answers prove it alive. A node that stops
//     answering (killed, partitioned, stopped) fails the calls it runs with
//     pool.ErrNodeLost (which matches pool.ErrWorkerCrashed) within 3
//     heartbeats (Options.Heartbeat) of its last word; one whose
//     subscription NATS says is gone ("no responders"), within about 2. A
//     late answer from it is dropped. A node ends the calls of a submitter
//     it has not heard from for 3 heartbeats.
//   - A node that leaves (Serve's ctx ends; natsremote.Main's on SIGTERM)
//     takes no new call, which goes to another node, and answers pings
//     while the calls it runs finish, within ServeOptions.Drain
//     (DefaultDrain, 25 s, unless set): those calls end as they would
//     have, and the pool sees the node leave (pool.NodeLeft), not lost,
//     also when it runs none of the pool's calls and stops answering as
//     soon as it has said that it leaves.
//   - A call carries the latest time it may start: when its pool would
//     give up on the node, were the node to say nothing more. A node that
//     reads it later answers "late" and never starts it, so no call starts
//     after its caller was told ErrNodeLost. Deadlines and start bounds are
//     wall-clock times read on the node: node clocks must agree with the
//     submitters' to well within a heartbeat.
//   - An input or output over the connection's maximum payload fails with
//     pool.ErrPayloadTooLarge before it is sent (the input before
//     admission); an error text or panic value over it is cut to fit.
//   - The task's name and a fingerprint of its In and Out types travel
//     with each call: a node that lacks the task, or was built with other
//     types for it, refuses the call, which goes to another node or fails
//     with pool.ErrUnknownTask when no live node has the task.
//   - Inputs and outputs cross as msgpack, as for Subprocess pools, and a
//     *transfer.Buffer crosses by copy: its bytes travel in the message,
//     the sender's handle is detached as for a move and its memory freed
//     once sent; the receiver gets a new Buffer.
//
// Per-node figures (slots, busy, free, this pool's calls, how old the
// last advert is) come from the nodes' pongs and answers: see
// pool.Pool.Nodes. Nodes that join, leave or are lost reach the pool's
// OnWorkerEvent and log as events of their own kinds, with
// WorkerEvent.Node set: pool.NodeJoined, pool.NodeLeft, pool.NodeLost
// (which counts in Stats.Crashed) and pool.NodeTaskCanceled, for a task
// whose caller gave up while it ran on its node (which counts in
// Stats.CanceledOnNode). Events and log records are
// delivered in order, from a goroutine of the transport's own, never under
// its lock: a hook may call back into the pool.
//
// # Tasks of other programs
//
// A node whose ServeOptions.Local is a Subprocess pool with a Command —
// workers that are a program of another language, such as a Python
// script — serves that program's tasks (pool.Extern) to Remote pools, so
// that the same workers scale across machines:
//
//	err := natsremote.Serve(ctx, nc, natsremote.ServeOptions{
//		Pool: "thumbs",
//		Local: pool.Options{Workers: 4, Isolation: pool.Subprocess,
//			Subprocess: pool.SubprocessOptions{Command: []string{"python3", "worker.py"}}},
//	})
//
// Such a node works as follows.
//
//   - Serve first hears the program's hello (pool.Pool.ProgramTasks; it
//     returns the error if the program does not start), and serves the
//     names the hello of the program's latest started worker lists,
//     whatever the node's binary registers or declares. A node of a
//     program refuses Go tasks, and a node of Go workers refuses a
//     program's tasks, as a node refuses a task it lacks: so Go nodes and
//     program nodes can serve one pool, each call going to a node of its
//     kind.
//   - An Extern task's input and output cross as JSON, with its
//     `offload:"blob"` field's bytes raw beside it, on both hops: the node
//     passes them to its program and back as they came, undecoded, and
//     needs no Go type of the task. No fingerprint travels, since the node
//     has none to compare: the program's hello is what the node checks the
//     name against, and an output whose JSON does not fit the caller's Out
//     fails the call with an error naming the task.
//   - An exception the program raises reaches the caller as a
//     *pool.RemoteError with its Type, Message and Traceback (cut to fit
//     the connection's maximum payload, saying so).
//   - Everything else holds as for Go tasks on a Subprocess node: the
//     cancel (the program is asked to stop the task, and killed after
//     TerminateGrace), MemoryLimit and a crash (pool.ErrWorkerCrashed,
//     with the exit status and the tail of its stderr), "full", the
//     heartbeat and ErrNodeLost.
//
// # Trust
//
// A call carries a random token, sent only on the subject of the node it
// goes to; the submitter takes an answer only with that token, and a pong
// only with its ping's nonce. Each call sent and each ping also has a
// reply subject of its own, with 128 random bits in it, under an inbox
// with 128 random bits of the pool's own: only the NATS server and the
// node it went to can name it, and the submitter takes nothing as being
// about a call or ping — an answer, a pong, the server's "no responders"
// — but on that subject. Adverts are hints: a node gets calls only once
// it has answered a ping on its own subject. So nobody but the node a
// call was sent to can answer it, make it go to another node, or make
// that node look gone; the node itself can, as it can answer "full"
// whether it ran the call or not (or that its worker did not start): a
// node is trusted with the calls it is sent. That holds provided only that node can read its subject, which is
// what NATS permissions enforce: see SubmitterPermissions and
// NodePermissions (which also let a node send a pool nothing but adverts
// and one answer to each call or ping it got), and the README's "Trust
// and permissions".
//
// # Protocol
//
// Version 2. Subjects, for a pool named P: nodes publish adverts on
// offload.P.adverts and answer a request for them on offload.P.discover;
// the node named NAME with the random suffix SUFFIX takes calls, cancels
// and pings on offload.P.node.NAME.SUFFIX; each pool gets the answer to
// call ID on INBOX.c.ID.SECRET and a pong of the node it numbers KEY on
// INBOX.p.KEY.SECRET, where INBOX is the connection's inbox prefix and
// 128 random bits of the pool's own, and SECRET 128 random bits of each
// call sent and each ping, in hex. A node answers each call and each
// ping once, on its reply subject (a call cancelled with a bare "ended").
// Messages are a fixed binary header (see wire.go) and the codec's
// msgpack, or for a program's task its JSON and blob (wire_program.go). A
// peer of another version is refused ("unknown", which sends
// a call elsewhere); within a version, a submitter fails a call whose
// answer is of a kind it does not know with an error, and sends it
// nowhere else: a node newer than its submitter, answering with a kind
// the submitter lacks (such as "worker not started"), costs it that call,
// never a second run.
package natsremote
