package natsjobs

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The watch remembers the last revision of the jobs of its last
// recentChanges changes, and forgets the oldest first.
func TestRecentRemembersTheLastChanges(t *testing.T) {
	var r recent
	assert.Zero(t, r.of("a"))
	r.add("a", 1)
	r.add("b", 2)
	r.add("a", 3)
	assert.EqualValues(t, 3, r.of("a"))
	assert.EqualValues(t, 2, r.of("b"))
	for i := range recentChanges - 1 {
		r.add(ID("x"+strconv.Itoa(i)), uint64(10+i))
	}
	assert.Zero(t, r.of("b"), "b's change was the oldest")
	assert.EqualValues(t, 3, r.of("a"), "a changed since")
	r.add("y", 1)
	assert.Zero(t, r.of("a"))
	assert.LessOrEqual(t, len(r.rev), recentChanges)
}
