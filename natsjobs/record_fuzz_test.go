package natsjobs

import (
	"strings"
	"testing"
	"time"
)

// FuzzDecodeRecord: a status record is read from a bucket that anyone
// with the permission can write: whatever its bytes, decoding returns a
// record or an error naming a corrupt record, and never panics.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []record{
		{Task: "t", State: Running, Attempt: 1, Enqueued: time.Unix(1, 0)},
		{Task: "t", State: Succeeded, Attempt: 2, Out: []byte{0x93, 1, 2, 3}, Finished: time.Unix(2, 0)},
		{Task: "t", State: Dead, Err: "boom"},
	} {
		b, err := encodeByName(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x91, 0x91, 0x91})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := decodeRecord(b); err != nil && !strings.Contains(err.Error(), "corrupt status record") {
			t.Fatalf("an error that says nothing of the record: %v", err)
		}
	})
}
