package blobjson

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type image struct {
	Width int    `json:"width"`
	Data  []byte `json:"data" offload:"blob"`
}

func TestFieldOf(t *testing.T) {
	f, err := FieldOf(reflect.TypeFor[image]())
	require.NoError(t, err)
	assert.Equal(t, &Field{Index: 1, Name: "data"}, f)
	f, err = FieldOf(reflect.TypeFor[*image]())
	require.NoError(t, err)
	assert.Equal(t, &Field{Index: 1, Name: "data", Ptr: true}, f)
	f, err = FieldOf(reflect.TypeFor[struct{ Plain []byte }]())
	require.NoError(t, err)
	assert.Nil(t, f, "an untagged []byte is JSON's")
	f, err = FieldOf(reflect.TypeFor[map[string]any]())
	require.NoError(t, err)
	assert.Nil(t, f)

	for _, bad := range []reflect.Type{
		reflect.TypeFor[struct {
			A []byte `offload:"blob"`
			B []byte `offload:"blob"`
		}](),
		reflect.TypeFor[struct {
			S string `offload:"blob"`
		}](),
		reflect.TypeFor[struct {
			b []byte `offload:"blob"`
		}](),
	} {
		_, err := FieldOf(bad)
		assert.Error(t, err, "%v", bad)
	}
}

func TestRoundTrip(t *testing.T) {
	in := image{Width: 3, Data: []byte{0, 1, 2, 0xff}}
	js, field, blob, err := Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"width":3,"data":null}`, string(js), "the bytes travel beside the JSON")
	assert.Equal(t, "data", field)
	assert.Equal(t, in.Data, blob)
	assert.Equal(t, []byte{0, 1, 2, 0xff}, in.Data, "the caller's value is left whole")

	var out image
	require.NoError(t, Unmarshal(js, field, blob, &out))
	assert.Equal(t, in, out)

	var ptr *image
	require.NoError(t, Unmarshal(js, field, blob, &ptr))
	assert.Equal(t, in, *ptr)

	js, field, blob, err = Marshal(&in)
	require.NoError(t, err)
	assert.Equal(t, "data", field)
	assert.Equal(t, in.Data, blob)
	assert.JSONEq(t, `{"width":3,"data":null}`, string(js))
}

func TestWithoutBlob(t *testing.T) {
	js, field, blob, err := Marshal(map[string]int{"a": 1})
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(js))
	assert.Empty(t, field)
	assert.Nil(t, blob)
	js, _, _, err = Marshal(nil)
	require.NoError(t, err)
	assert.Equal(t, "null", string(js))
	js, field, _, err = Marshal((*image)(nil))
	require.NoError(t, err)
	assert.Equal(t, "null", string(js))
	assert.Empty(t, field)

	var m map[string]int
	require.NoError(t, Unmarshal([]byte(`{"a":1}`), "", nil, &m))
	assert.Equal(t, map[string]int{"a": 1}, m)
}

// A blob the value has no place for is an error, not bytes dropped.
func TestBlobWithoutItsField(t *testing.T) {
	var m map[string]int
	assert.Error(t, Unmarshal([]byte(`{}`), "data", []byte{1}, &m))
	var img image
	assert.Error(t, Unmarshal([]byte(`{}`), "other", []byte{1}, &img))
	assert.Error(t, Unmarshal([]byte(`{}`), "data", []byte{1}, img))
	_, _, _, err := Marshal(struct {
		A []byte `offload:"blob"`
		B []byte `offload:"blob"`
	}{})
	assert.Error(t, err)
}

// A Raw passes through both ways as it is: what a worker node does with
// a program's values, whose Go types it lacks.
func TestRawPassesThrough(t *testing.T) {
	js, field, blob, err := Marshal(image{Width: 3, Data: []byte{9, 8}})
	require.NoError(t, err)
	var r Raw
	require.NoError(t, Unmarshal(js, field, blob, &r))
	assert.Equal(t, Raw{JSON: js, Field: "data", Blob: []byte{9, 8}}, r)

	js2, field2, blob2, err := Marshal(r)
	require.NoError(t, err)
	assert.Equal(t, string(js), string(js2))
	assert.Equal(t, "data", field2)
	assert.Equal(t, []byte{9, 8}, blob2)

	var out image
	require.NoError(t, Unmarshal(js2, field2, blob2, &out))
	assert.Equal(t, image{Width: 3, Data: []byte{9, 8}}, out)
}
