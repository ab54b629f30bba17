package workerproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Limits on worker output: a longer line is logged in pieces of maxLine
// bytes; the stderr tail keeps the last tailLines lines within tailBytes.
const (
	maxLine   = 4 << 10
	tailLines = 20
	tailBytes = 4 << 10
)

// output copies one of a worker's output streams to the logger, line by
// line, keeping a bounded tail of the last lines.
type output struct {
	logger *slog.Logger // already tagged with worker and pid
	stream string       // "stdout" or "stderr"

	mu    sync.Mutex
	tail  []string
	bytes int
	crash string // the last crash headline whose trace followed, see crashLine
	// headline is a crash headline still waiting for its goroutine trace;
	// anything but what the runtime prints in between drops it.
	headline string
	waiting  bool
	inRace   bool // within a -race build's report, see raceDelimiter
}

// raceDelimiter opens and closes the race detector's reports. In a -race
// build another thread may write one between a crash headline and its
// trace (a fatal "concurrent map writes" comes with data races), so a
// report is passed over whole rather than taken for the task's output.
const raceDelimiter = "=================="

// isCrashLine reports whether s opens a Go runtime crash report: its
// headline scrolls out of the tail under the goroutine dump, so it is kept
// apart.
func isCrashLine(s string) bool {
	return strings.HasPrefix(s, "panic: ") || strings.HasPrefix(s, "fatal error: ")
}

// isTraceHeader reports whether s opens the trace the runtime prints after
// a crash headline: "goroutine 1 [running]:" ("goroutine 1 gp=... [" at
// GOTRACEBACK=crash), or "runtime stack:" for a throw on the system stack.
func isTraceHeader(s string) bool {
	if s == "runtime stack:" {
		return true
	}
	rest, ok := strings.CutPrefix(s, "goroutine ")
	if !ok {
		return false
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	rest = rest[digits:]
	return digits > 0 && (strings.HasPrefix(rest, " [") || strings.HasPrefix(rest, " gp="))
}

// copy logs r's lines until r ends or fails (e.g. closed by the reaper);
// it never holds more than maxLine bytes of one line.
func (o *output) copy(r io.Reader) {
	br := bufio.NewReaderSize(r, maxLine)
	piece := false // the line is a further piece of a line longer than maxLine
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			o.line(line, piece)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
		piece = errors.Is(err, bufio.ErrBufferFull)
	}
}

func (o *output) line(b []byte, piece bool) {
	b = bytes.TrimRight(b, "\r\n")
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	o.logger.LogAttrs(context.Background(), slog.LevelInfo, s, slog.String("stream", o.stream))
	o.mu.Lock()
	defer o.mu.Unlock()
	// A task can print a headline too: it counts only once the runtime's
	// trace follows, past the lines the runtime prints in between (the
	// fault's signal, nested panics and a value's further lines, indented,
	// and a blank line). The account also checks how the process ended.
	switch {
	case piece: // the rest of a long line neither opens nor breaks a report
	case isCrashLine(s):
		o.headline, o.waiting = truncate(s, maxLine), true
	case s == raceDelimiter:
		o.inRace = !o.inRace
	case o.inRace, !o.waiting:
	case isTraceHeader(s):
		o.crash, o.waiting = o.headline, false
	case strings.HasPrefix(s, "[signal "):
		o.headline += " " + truncate(s, maxLine) // the fault's signal and address
	case s == "" || strings.HasPrefix(s, "\t"):
	default:
		o.waiting = false
	}
	o.tail = append(o.tail, s)
	o.bytes += len(s) + 1
	for len(o.tail) > tailLines || (o.bytes > tailBytes && len(o.tail) > 1) {
		o.bytes -= len(o.tail[0]) + 1
		o.tail = o.tail[1:]
	}
}

// lines returns the tail, newline-separated.
func (o *output) lines() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.tail, "\n")
}

// crashLine returns the last crash headline ("panic: ...", "fatal
// error: ...") that a goroutine trace followed, with its "[signal ...]"
// line if one came in between; "" if none.
func (o *output) crashLine() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.crash
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
