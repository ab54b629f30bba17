//go:build linux

package workerproc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offloadgo/offload/internal/testkit"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// Frame kinds of the test worker (the test binary re-executed).
const (
	kindEcho       byte = iota + 1 // reply with the same frame
	kindPrint                      // print the body to stdout and stderr, then echo
	kindExit3                      // os.Exit(3)
	kindNilDeref                   // nil pointer dereference: Go's SIGSEGV panic
	kindGoPanic                    // panic on a goroutine of its own
	kindFatal                      // fatal runtime error (unrecoverable)
	kindAbort                      // crash with GOTRACEBACK=crash: killed by SIGABRT
	kindAlloc                      // allocate until killed
	kindHang                       // stop reading and sleep forever
	kindSendN                      // try to send a frame whose body length is the body's number
	kindFDs                        // reply with the contents of the received descriptors
	kindHold                       // allocate and touch the body's number of MiB, keep it, reply
	kindSpawn                      // start a grandchild, sleep 30, sharing stdout and stderr; reply with its pid
	kindStderrExit                 // body "N\ntext": print text to stderr, then os.Exit(N)
	kindHog                        // body "anon:N" or "memfd:N": start a memory hog (testkit) as a child; reply with its pid
	kindHogHold                    // tell the hog to hold its memory, then reply
	kindMemfd                      // body "N" or "N mapped": write N MiB to a memfd (or map it and touch them), keep it open, reply
)

// Environment variables that steer the test binary.
const (
	envHelloVersion = "CANCEL_TEST_HELLO_VERSION" // worker: send this version
	envIntermediate = "CANCEL_TEST_INTERMEDIATE"  // start a worker and a grandchild, print their pids, exit at EOF on stdin
	envNoHello      = "CANCEL_TEST_NO_HELLO"      // worker: never send the hello
)

var testTasks = []string{"echo", "crash"}

// heldMemory keeps kindHold's allocations alive in the test worker, and
// heldFiles kindMemfd's memfds open.
var (
	heldMemory [][]byte
	heldFiles  []*os.File
)

// hog is the memory hog kindHog started, for kindHogHold.
var hog *testkit.MemoryHog

func TestMain(m *testing.M) {
	testkit.RunMemoryHog()
	conn, worker, err := Attach()
	if worker {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		serveTest(conn)
	}
	if os.Getenv(envIntermediate) == "1" {
		intermediate()
	}
	goleak.VerifyTestMain(m)
}

// serveTest is the test worker's loop; it exits the process.
func serveTest(conn *Conn) {
	if os.Getenv(envNoHello) == "1" {
		time.Sleep(time.Hour)
	}
	version, _ := strconv.Atoi(os.Getenv(envHelloVersion))
	if err := conn.SendHello(Hello{Version: version, Tasks: testTasks}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for {
		f, err := conn.ReadFrame()
		if errors.Is(err, io.EOF) {
			os.Exit(0) // the supervisor closed the channel or died
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		if err := handleTest(conn, f); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
	}
}

func handleTest(conn *Conn, f Frame) error {
	switch f.Kind {
	case kindEcho:
	case kindPrint:
		os.Stdout.Write(f.Body)
		os.Stderr.Write(f.Body)
	case kindExit3:
		fmt.Fprintln(os.Stderr, "exiting with status 3")
		os.Exit(3)
	case kindNilDeref:
		var p *Frame
		_ = p.Kind
	case kindGoPanic:
		go panic("boom on a goroutine")
		select {}
	case kindFatal:
		var mu sync.Mutex
		mu.Unlock() // "fatal error: sync: unlock of unlocked mutex"
	case kindAbort:
		debug.SetTraceback("crash")
		panic("abort")
	case kindAlloc:
		var keep [][]byte
		for {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			//lint:ignore SA4010 kept, never read: the heap grows until the memory limit kills the worker
			keep = append(keep, b)
		}
	case kindHang:
		select {}
	case kindSendN:
		n, _ := strconv.Atoi(string(f.Body))
		err := conn.WriteFrame(Frame{Kind: kindSendN, ID: f.ID, Body: make([]byte, n)})
		f.Body = []byte(fmt.Sprint(err))
	case kindFDs:
		var body []byte
		for _, fd := range f.FDs {
			file := os.NewFile(uintptr(fd), "received")
			b, err := io.ReadAll(file)
			file.Close()
			if err != nil {
				return err
			}
			body = append(body, b...)
		}
		f = Frame{Kind: kindFDs, ID: f.ID, Body: body}
	case kindHold:
		n, _ := strconv.Atoi(string(f.Body))
		held := make([]byte, n<<20)
		for i := 0; i < len(held); i += 4096 {
			held[i] = 1
		}
		heldMemory = append(heldMemory, held)
	case kindSpawn:
		// As a task's helper process would: it shares the worker's output,
		// and the worker never waits for it.
		cmd := exec.Command("sleep", "30")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		f.Body = []byte(strconv.Itoa(cmd.Process.Pid))
	case kindHog:
		how, mib, _ := strings.Cut(string(f.Body), ":")
		n, _ := strconv.Atoi(mib)
		h, err := testkit.StartMemoryHog(how, n)
		if err != nil {
			return err
		}
		hog = h
		f.Body = []byte(strconv.Itoa(h.Cmd.Process.Pid))
	case kindHogHold:
		if err := hog.Hold(); err != nil {
			return err
		}
	case kindMemfd:
		fd, err := unix.MemfdCreate("offload-test", unix.MFD_CLOEXEC)
		if err != nil {
			return err
		}
		file := os.NewFile(uintptr(fd), "memfd")
		heldFiles = append(heldFiles, file)
		mib, how, _ := strings.Cut(string(f.Body), " ")
		n, _ := strconv.Atoi(mib)
		if how == "mapped" {
			if err := file.Truncate(int64(n) << 20); err != nil {
				return err
			}
			mem, err := unix.Mmap(fd, 0, n<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				return err
			}
			for i := 0; i < len(mem); i += 4096 {
				mem[i] = 1
			}
		} else {
			chunk := bytes.Repeat([]byte{1}, 1<<20)
			for range n {
				if _, err := file.Write(chunk); err != nil {
					return err
				}
			}
		}
		f.Body = nil
	case kindStderrExit:
		status, text, _ := strings.Cut(string(f.Body), "\n")
		code, err := strconv.Atoi(status)
		if err != nil {
			return err
		}
		os.Stderr.WriteString(text)
		os.Exit(code)
	default:
		return fmt.Errorf("unknown kind %d", f.Kind)
	}
	return conn.WriteFrame(f)
}

// intermediate starts a worker, has it start a grandchild, makes it stop
// reading (so that the EOF of its channel cannot end it), prints both pids
// and, once its stdin ends, exits without closing the worker: the worker
// and its grandchild must die of their supervisor's death. Waiting for
// stdin lets the test watch both processes (pidfds) before they can die.
func intermediate() {
	p, err := Start(testContext(), Spec{})
	var grandchild Frame
	if err == nil {
		err = p.Conn().WriteFrame(Frame{Kind: kindSpawn})
	}
	if err == nil {
		grandchild, err = p.Conn().ReadFrame()
	}
	if err == nil {
		err = p.Conn().WriteFrame(Frame{Kind: kindHang})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(p.PID(), string(grandchild.Body))
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
