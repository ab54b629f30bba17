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
// or, with no code, pool.Main in a binary that imports this package, with
// OFFLOAD_NATS_URL set (see EnvURL and the variables beside it). Package
// embedded runs a NATS server in the process, for a single machine.
//
// # Admission and dispatch
//
// Admission, the queue, QueueDelay, Shed, Load and Stats are the pool's,
// as for any pool: ErrQueueFull is decided locally and publishes nothing.
// A worker goroutine that takes a task sends it to a node with a free
// slot. Nodes advertise their free slots every heartbeat (and at once
// when a slot frees after they turned a call away); the pool picks the
// better of two random nodes by their advertised free slots less its own
// calls sent since (power of two choices, never NATS queue groups, which
// pick at random). A node admits without queueing: with no free slot it
// answers "full" and the pool tries another node, or waits for room until
// the task's ctx ends. That wait counts in Stats.WaitTime, not RunTime: a
// Remote task's run time starts when it is sent to the node that takes it
// (it includes the network's round trip), and Busy counts the worker
// goroutines waiting for a node. QueueDelay bounds that wait too: a task
// that finds no free slot within what QueueDelay left it after its time in
// the queue fails with an error matching ErrQueueFull, sent nowhere, and
// counts as Canceled, as QueueDelay's drops from the queue do. Set
// Workers to about the nodes' total slots all the same: then tasks wait in
// the queue, where Shed and Load see them.
//
// # The contract
//
//   - An accepted call runs at most once. Once a node has taken a call it
//     is never sent again; there is no automatic retry. A call that no node
//     took (each answered "full", or lacks the task) has not run.
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
//     even if the cancel is lost (the nodes' clocks must agree to within
//     what the deadline can spare).
//   - A node that stops answering (killed, partitioned, stopped) fails the
//     calls it runs with pool.ErrNodeLost (which matches
//     pool.ErrWorkerCrashed) within 3 heartbeats (Options.Heartbeat) of
//     its last word; a late answer from it is dropped. A node ends the
//     calls of a submitter it has not heard from for 3 heartbeats.
//   - An input or output over the connection's maximum payload fails with
//     pool.ErrPayloadTooLarge before it is sent (the input before
//     admission).
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
// last advert is) come from the adverts: see pool.Pool.Nodes. Nodes that
// join, leave or are lost reach the pool's Stats as they would for worker
// processes: a lost node counts in Stats.Crashed, a task cancelled on its
// node in Stats.Terminated.
//
// # Protocol
//
// Subjects, for a pool named P: nodes publish adverts on offload.P.adverts
// and answer a request for them on offload.P.discover; each node takes
// calls, cancels and pings on offload.P.node.ID; each pool gets answers
// and pongs on an inbox of its own. Messages are a fixed binary header
// (see wire.go) and the codec's msgpack.
package natsremote
