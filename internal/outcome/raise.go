package outcome

import (
	"encoding/json"

	"github.com/offloadgo/offload/internal/seam"
)

// An exception raised in a program of another language crosses as JSON,
// so that a node passes it on as the program sent it.
type exception struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
}

// Raise is the Outcome of an exception of type typ with message and
// traceback, raised by a task in a program of another language.
func Raise(typ, message, traceback string) Outcome {
	body, _ := json.Marshal(exception{typ, message, traceback}) // strings always encode
	return Outcome{Kind: Raised, Body: body}
}

// raised is the error a Raised outcome's body names.
func raised(body []byte) error {
	var e exception
	if err := json.Unmarshal(body, &e); err != nil {
		return &seam.TaskError{Message: "an exception whose account is corrupt: " + err.Error()}
	}
	if e.Type == "" {
		e.Type = "Error"
	}
	return &seam.TaskError{Message: e.Message, Type: e.Type, Traceback: e.Traceback}
}
