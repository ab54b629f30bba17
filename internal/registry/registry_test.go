package registry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runs numbers TestAddLookupNames's runs: the registry is the process's,
// and each run under -count N registers names of its own.
var runs atomic.Int32

func TestAddLookupNames(t *testing.T) {
	prefix := fmt.Sprintf("registry.test.%d.", runs.Add(1))
	a, b := prefix+"a", prefix+"b"
	double := Invoker(func(_ context.Context, n int) (int, error) { return 2 * n, nil })
	ib, err := Add(Entry{Name: b, Invoke: double})
	require.NoError(t, err)
	ia, err := Add(Entry{Name: a, Invoke: double})
	require.NoError(t, err)
	assert.Equal(t, ib+1, ia, "indices number the tasks in the order they were added")
	assert.Equal(t, ia+1, Len())
	_, err = Add(Entry{Name: a, Invoke: double})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("%q registered twice", a))

	e, ok := Lookup(b)
	require.True(t, ok)
	out, err := e.Invoke(context.Background(), func(in any) error {
		*in.(*int) = 21
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 42, out)

	bad := errors.New("undecodable")
	_, err = e.Invoke(context.Background(), func(any) error { return bad })
	assert.ErrorIs(t, err, bad, "a decode failure is the call's error, and the task does not run")

	_, ok = Lookup(prefix + "none")
	assert.False(t, ok)
	names := Names()
	assert.IsNonDecreasing(t, names)
	assert.Contains(t, names, a)
}

func TestFingerprint(t *testing.T) {
	type v1 struct {
		Name string
		N    int
	}
	type v2 struct {
		Name string
		N    int64 // a field's type changed
	}
	type tagged struct {
		Name string `msgpack:"name"`
		N    int
	}
	type list struct {
		Next *list
		N    int
	}
	of := reflect.TypeFor[v1]()
	assert.Equal(t, Fingerprint(of, reflect.TypeFor[int]()), Fingerprint(of, reflect.TypeFor[int]()), "stable")
	assert.NotEqual(t, Fingerprint(of, reflect.TypeFor[int]()), Fingerprint(reflect.TypeFor[v2](), reflect.TypeFor[int]()))
	assert.NotEqual(t, Fingerprint(of, reflect.TypeFor[int]()), Fingerprint(reflect.TypeFor[tagged](), reflect.TypeFor[int]()))
	assert.NotEqual(t, Fingerprint(of, reflect.TypeFor[int]()), Fingerprint(of, reflect.TypeFor[string]()), "the output counts")
	assert.NotZero(t, Fingerprint(reflect.TypeFor[list](), reflect.TypeFor[[]list]()), "recursive types terminate")
}
