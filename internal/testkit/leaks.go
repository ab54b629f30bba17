package testkit

import "go.uber.org/goleak"

// IgnoreSourceSetup is the goleak option for tests of durable jobs: a
// queue's work stream sources its due jobs from the schedules stream,
// and nats-server (v2.15) waits for that source's consumer in a
// goroutine that only a reply or its own 30 s timer ends. A server shut
// down during the wait leaves it behind for up to that long.
var IgnoreSourceSetup = goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*stream).trySetupSourceConsumer.func3")
