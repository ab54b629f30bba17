package transfer_test

import (
	"fmt"

	"github.com/offloadgo/offload/transfer"
)

func ExampleNewBuffer() {
	b, err := transfer.NewBuffer(4)
	if err != nil {
		panic(err)
	}
	copy(b.Bytes(), "data")
	moved, err := transfer.HandOver(b) // what passing it to a task does
	if err != nil {
		panic(err)
	}
	fmt.Println(b.Detached(), b.Bytes() == nil, string(moved.Bytes()))
	_, err = transfer.HandOver(b)
	fmt.Println(err)
	moved.Release()
	// Output:
	// true true data
	// transfer: buffer is detached
}

func ExampleMove() {
	raw := []byte("payload the caller gives up")
	b := transfer.Move(raw)
	fmt.Println(b.Len(), &raw[0] == &b.Bytes()[0])
	// Output: 27 true
}

func ExampleHandOver() {
	type Job struct {
		Name  string
		Input *transfer.Buffer
	}
	in, _ := transfer.NewBuffer(1 << 20)
	job, err := transfer.HandOver(Job{Name: "resize", Input: in})
	if err != nil {
		panic(err)
	}
	fmt.Println(job.Name, job.Input.Len(), in.Detached())
	job.Input.Release()
	// Output: resize 1048576 true
}

func ExampleCopy() {
	type Row struct{ Tags []string }
	in := Row{Tags: []string{"a"}}
	out, _ := transfer.Copy(in)
	out.Tags[0] = "changed"
	fmt.Println(in.Tags[0])
	// Output: a
}

func ExampleCheck() {
	type Bad struct{ Done chan struct{} }
	fmt.Println(transfer.Check(Bad{}))
	// Output: transfer: value cannot cross a process boundary: transfer_test.Bad.Done is a chan
}

// Two Peers in one process stand for the two ends of a worker connection
// here; across processes the segment's descriptor travels with SCM_RIGHTS
// and the receiver Adopts the one it gets.
func ExamplePeer() {
	parent, worker := transfer.NewPeer(), transfer.NewPeer()
	defer parent.Close()
	defer worker.Close()

	b, _ := transfer.NewBuffer(8)
	copy(b.Bytes(), "bytes!!!")
	msg, segs, err := parent.Marshal(struct{ In *transfer.Buffer }{b})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(segs), b.Detached(), len(msg) < 64)
	// Within one process the arena is the same, so the worker can't adopt
	// the segment; a real worker would Adopt(segs[0].ID, receivedFD, segs[0].Size).
	fmt.Println(worker.Adopt(segs[0].ID, -1, segs[0].Size) != nil)
	// Output:
	// 1 true true
	// true
}
