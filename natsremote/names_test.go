package natsremote

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// table is a submitter whose node table holds, for each name given, that
// many verified nodes with free slots each: candidate's input, with no
// network.
func table(nodesByName map[string]int, free int) *submitter {
	s := &submitter{o: Options{Heartbeat: time.Hour, MaxNodesPerName: maxNodes},
		nodes: map[string]*knownNode{}, names: map[string]*nameGroup{}, byKey: map[uint64]*knownNode{}}
	now := time.Now()
	for name, count := range nodesByName {
		for i := range count {
			s.lastID++
			n := &knownNode{id: fmt.Sprint(name, "-", i), key: s.lastID, window: maxSlots, heardAt: now, verified: true}
			n.free, n.workers = free, free
			s.enter(n, name)
			n.group.verified++
		}
	}
	return s
}

// picksByName counts candidate's picks, by node name, over draws.
func picksByName(s *submitter, draws int) map[string]int {
	p := &pending{fullAt: map[uint64]uint64{}}
	now := time.Now()
	got := map[string]int{}
	for range draws {
		n, _, _ := s.candidate("task", p, now)
		got[n.group.name]++
	}
	return got
}

// Calls are spread over names before nodes: with as much room
// everywhere, each name gets its share of the picks, however many nodes
// it has. (The bounds are 20 standard deviations wide: they can't
// flake.)
func TestCandidateSpreadsOverNamesFirst(t *testing.T) {
	t.Parallel()
	const draws = 10000
	for _, tc := range []struct {
		nodes map[string]int
		share float64
	}{
		{map[string]int{"crowd": 8, "real": 1}, 1.0 / 2},
		{map[string]int{"crowd": 1000, "a": 1, "b": 2}, 1.0 / 3},
		{map[string]int{"a": 3, "b": 3, "c": 3, "d": 1}, 1.0 / 4},
	} {
		got := picksByName(table(tc.nodes, 4), draws)
		for name := range tc.nodes {
			assert.InDelta(t, tc.share*draws, got[name], 0.1*draws, "%v: %v", tc.nodes, got)
		}
	}
}

// Within a name, and between names, the pick goes to more room.
func TestCandidatePrefersRoom(t *testing.T) {
	t.Parallel()
	s := table(map[string]int{"a": 2, "b": 1}, 4)
	s.names["a"].nodes[0].free = 1
	s.names["b"].nodes[0].free = 1
	got := picksByName(s, 1000)
	assert.Equal(t, 1000, got["a"], "a's roomier node beats b's only one: %v", got)
	p := &pending{fullAt: map[uint64]uint64{}}
	n, live, refused := s.candidate("task", p, time.Now())
	require.NotNil(t, n)
	assert.Equal(t, 4, n.free)
	assert.Equal(t, 3, live)
	assert.Zero(t, refused)
}

// BenchmarkCandidate is the pick on the hot path (under the submitter's
// lock, once per call sent), by table shape: it walks every node once.
//
//	go test ./natsremote -run '^$' -bench Candidate -benchmem
func BenchmarkCandidate(b *testing.B) {
	for _, shape := range []struct{ names, perName int }{{1, 1}, {4, 2}, {16, 8}, {128, 8}, {1, 1024}} {
		nodes := map[string]int{}
		for i := range shape.names {
			nodes[fmt.Sprint("n", i)] = shape.perName
		}
		s := table(nodes, 4)
		p := &pending{fullAt: map[uint64]uint64{}}
		b.Run(fmt.Sprintf("names=%d/per-name=%d", shape.names, shape.perName), func(b *testing.B) {
			b.ReportAllocs()
			now := time.Now()
			for b.Loop() {
				if n, _, _ := s.candidate("task", p, now); n == nil {
					b.Fatal("no pick")
				}
			}
		})
	}
}
