// Package nodehook lets pool.Main make a process a worker node of Remote
// pools without package pool importing the transport that serves them:
// natsremote imports pool, so it registers itself here at init instead,
// and a node binary is one that imports natsremote.
package nodehook

// EnvURL names the environment variable that makes pool.Main serve as a
// worker node: the NATS server URL(s) to connect to, comma-separated.
// package natsremote documents the others it reads.
const EnvURL = "OFFLOAD_NATS_URL"

// Serve, set at init by package natsremote, serves this process as a
// worker node as the environment says, until the process is told to stop
// (SIGINT, SIGTERM), and returns its exit status. nil when natsremote is
// not linked into the binary.
var Serve func() (code int)
