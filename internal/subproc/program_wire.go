package subproc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/offloadgo/offload/internal/outcome"
	"github.com/offloadgo/offload/internal/workerproc"
)

// The program dialect: what a worker process that is a program of another
// language speaks (sdk/PROTOCOL.md, which is its contract; keep the two
// in step). Its frames are workerproc's; each body but the hello is a
// message: a 4-byte big-endian length, a JSON object (the header), then
// the blob, raw bytes.

// ProgramVersion is the version of sdk/PROTOCOL.md this package speaks; a
// program whose hello names another is refused.
const ProgramVersion = 1

// Frame kinds of the program dialect: the Go dialect's bytes where they
// mean the same.
const (
	progCall     byte = 0x01
	progCancel   byte = 0x02
	progResult   byte = 0x03
	progError    byte = 0x04
	progTooLarge byte = 0x06
	progUnknown  byte = 0x07
)

// programAnswers puts each outcome a program can report on its wire.
// TestProgramAnswerBytes pins the bytes, which are PROTOCOL.md's.
var programAnswers = outcome.Wire{
	progResult:   outcome.Result,
	progError:    outcome.Raised,
	progTooLarge: outcome.TooLarge,
	progUnknown:  outcome.Unknown,
}

// messageLenSize is the size of a message's header length.
const messageLenSize = 4

// callHeader is a call's header.
type callHeader struct {
	Task  string            `json:"task"`
	Input json.RawMessage   `json:"input"`
	Blob  string            `json:"blob,omitempty"`
	Trace map[string]string `json:"trace,omitempty"`
}

// answerHeader is the header of any answer: each kind fills its own.
type answerHeader struct {
	Output    json.RawMessage `json:"output"`
	Blob      string          `json:"blob"`
	Recycle   bool            `json:"recycle"`
	Type      string          `json:"type"`
	Message   string          `json:"message"`
	Traceback string          `json:"traceback"`
}

// appendMessage appends a message of header (a JSON object) and blob to b.
func appendMessage(b, header, blob []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	return append(b, blob...)
}

// errMalformed is the error of an answer a program should never send.
var errMalformed = errors.New("malformed answer")

// splitMessage parses body as a message: its header, decoded into h, and
// its blob.
func splitMessage(body []byte, h any) (blob []byte, err error) {
	if len(body) < messageLenSize {
		return nil, fmt.Errorf("%w: body of %d bytes, shorter than a message's length", errMalformed, len(body))
	}
	n := uint64(binary.BigEndian.Uint32(body))
	body = body[messageLenSize:]
	if n > uint64(len(body)) {
		return nil, fmt.Errorf("%w: header of %d bytes in a body of %d", errMalformed, n, len(body))
	}
	if n == 0 || body[0] != '{' {
		return nil, fmt.Errorf("%w: header is not a JSON object", errMalformed)
	}
	if err := json.Unmarshal(body[:n], h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", errMalformed, err)
	}
	return body[n:], nil
}

// programCancel asks the program to stop call id because ctx ended
// (PROTOCOL.md's causes).
func programCancel(id uint64, ctx context.Context) workerproc.Frame {
	header, _ := json.Marshal(struct {
		Cause string `json:"cause"`
	}{outcome.CauseOf(context.Cause(ctx)).String()})
	return workerproc.Frame{Kind: progCancel, ID: id, Body: appendMessage(nil, header, nil)}
}
