package testkit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// EnvMemoryHog, in a test binary's environment, makes RunMemoryHog turn
// the process into a memory hog: "anon:N" or "memfd:N", N in MiB.
const EnvMemoryHog = "OFFLOAD_TEST_MEMORY_HOG"

// memoryHogLife bounds a hog's life, so that none outlives a failed test
// for long: it exits after that whatever happens.
const memoryHogLife = time.Minute

// MemoryHog is the test binary re-run as a process that holds memory when
// told to: a task's child process over a worker's MemoryLimit. Its
// TestMain must call RunMemoryHog first.
type MemoryHog struct {
	Cmd   *exec.Cmd
	stdin io.WriteCloser
}

// StartMemoryHog starts a hog that, once Hold is called, holds mib MiB:
// anonymous memory it allocates and touches (how "anon"), or a memfd it
// writes and keeps open but never maps (how "memfd", Linux only). Its
// stdout and stderr are the caller's.
func StartMemoryHog(how string, mib int) (*MemoryHog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	// GOMEMLIMIT off: the hog inherits a worker's limit, and a collector
	// working to stay under it would only slow the hog down.
	cmd.Env = append(os.Environ(), EnvMemoryHog+"="+how+":"+strconv.Itoa(mib), "GOMEMLIMIT=off")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &MemoryHog{Cmd: cmd, stdin: stdin}, nil
}

// Hold tells the hog to take its memory; it does not wait for it. Once
// it holds it, the hog prints "memory hog PID holds N MiB (how)".
func (h *MemoryHog) Hold() error {
	_, err := h.stdin.Write([]byte{1})
	return err
}

// Wait waits for the hog's exit: once it holds its memory, it exits when
// killed, when End closes its stdin, or after a minute.
func (h *MemoryHog) Wait() error { return h.Cmd.Wait() }

// End closes the hog's stdin, which ends it, and waits for its exit.
func (h *MemoryHog) End() error {
	h.stdin.Close()
	return h.Cmd.Wait()
}

// RunMemoryHog returns at once unless EnvMemoryHog is set; then it waits
// for a byte on stdin, holds the memory the variable names, waits for
// EOF on stdin (or memoryHogLife) and exits.
func RunMemoryHog() {
	v, ok := os.LookupEnv(EnvMemoryHog)
	if !ok {
		return
	}
	if err := runMemoryHog(v); err != nil {
		fmt.Fprintln(os.Stderr, "memory hog:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runMemoryHog(spec string) error {
	how, n, _ := strings.Cut(spec, ":")
	mib, err := strconv.Atoi(n)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", EnvMemoryHog, spec, err)
	}
	var one [1]byte
	if _, err := os.Stdin.Read(one[:]); err != nil {
		return nil // told to end before holding anything
	}
	var held any
	switch how {
	case "anon":
		b := make([]byte, mib<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = b
	case "memfd":
		if held, err = holdMemfd(mib); err != nil {
			return err
		}
	default:
		return errors.New("unknown hog " + how)
	}
	fmt.Printf("memory hog %d holds %d MiB (%s)\n", os.Getpid(), mib, how)
	ended := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(memoryHogLife):
	}
	runtime.KeepAlive(held)
	return nil
}
