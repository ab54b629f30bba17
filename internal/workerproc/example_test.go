//go:build linux

package workerproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/offloadgo/offload/internal/workerproc"
)

// The supervisor: start this very program as a worker (its TestMain calls
// Attach), exchange a frame, and close it.
func ExampleStart() {
	p, err := workerproc.Start(context.Background(), workerproc.Spec{ID: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	fmt.Println("tasks:", p.Hello().Tasks)

	const kindEcho = 1 // the test worker's echo kind
	if err := p.Conn().WriteFrame(workerproc.Frame{Kind: kindEcho, ID: 7, Body: []byte("ping")}); err != nil {
		fmt.Println(err)
		return
	}
	f, err := p.Conn().ReadFrame()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("reply %d: %s\n", f.ID, f.Body)

	p.Close()
	fmt.Println("exited cleanly:", p.Exit().Success())
	// Output:
	// tasks: [echo crash]
	// reply 7: ping
	// exited cleanly: true
}

// The worker: Attach first thing in main; in any other process it reports
// false at once, as it does here.
func ExampleAttach() {
	conn, worker, err := workerproc.Attach()
	if !worker {
		fmt.Println("not a worker: carry on as the supervisor")
		return
	}
	if err != nil {
		panic(err) // a worker that cannot serve: exit
	}
	conn.SendHello(workerproc.Hello{Tasks: []string{"resize"}})
	for {
		f, err := conn.ReadFrame()
		if errors.Is(err, io.EOF) {
			return // the supervisor closed the channel or died: exit
		}
		if err != nil {
			panic(err)
		}
		conn.WriteFrame(f) // serve it
	}
	// Output:
	// not a worker: carry on as the supervisor
}
