package natsremote

import (
	"encoding/binary"
	"fmt"

	"github.com/offloadgo/offload/internal/blobjson"
)

// A task of a program of another language (pool.Extern) has an input and
// an output that cross as JSON, with the bytes of one field beside it.
// Such a program value travels, after a call's head or as a result's
// body, as:
//
//	json   uvarint length, then the value's JSON (encoding/json's)
//	field  uvarint length, then the JSON name of the field the blob
//	       fills; empty for none
//	blob   the rest: raw bytes
//
// A node passes both on to its program and back as they are, undecoded:
// it needs no Go type of the task.

// maxFieldLen bounds a blob field's name.
const maxFieldLen = 1024

// appendProgramValue appends v to b.
func appendProgramValue(b []byte, v blobjson.Raw) []byte {
	b = binary.AppendUvarint(b, uint64(len(v.JSON)))
	b = append(b, v.JSON...)
	b = binary.AppendUvarint(b, uint64(len(v.Field)))
	b = append(b, v.Field...)
	return append(b, v.Blob...)
}

// programValueLen is the length appendProgramValue adds for v.
func programValueLen(v blobjson.Raw) int {
	return 2*binary.MaxVarintLen64 + len(v.JSON) + len(v.Field) + len(v.Blob)
}

// parseProgramValue reads a program value; its parts are body's bytes,
// not copies.
func parseProgramValue(body []byte) (blobjson.Raw, error) {
	js, rest, err := splitField(body, uint64(len(body)), "program value's JSON")
	if err != nil {
		return blobjson.Raw{}, err
	}
	field, blob, err := splitField(rest, maxFieldLen, "program value's blob field")
	if err != nil {
		return blobjson.Raw{}, err
	}
	if len(js) == 0 {
		return blobjson.Raw{}, fmt.Errorf("%w: program value without JSON", errCorrupt)
	}
	return blobjson.Raw{JSON: js, Field: string(field), Blob: blob}, nil
}
