package registry

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddLookupNames(t *testing.T) {
	double := func(_ context.Context, n int) (int, error) { return 2 * n, nil }
	require.NoError(t, Add("registry.test.b", double))
	require.NoError(t, Add("registry.test.a", double))
	err := Add("registry.test.a", double)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"registry.test.a" registered twice`)

	e, ok := Lookup("registry.test.b")
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

	_, ok = Lookup("registry.test.none")
	assert.False(t, ok)
	names := Names()
	assert.IsNonDecreasing(t, names)
	assert.Contains(t, names, "registry.test.a")
}
