// Package sdk carries the worker libraries of programs in other languages
// that serve pool.Extern tasks: sdk/python/offload_worker.py and
// sdk/node/offload-worker.mjs, one standard-library file each, which speak
// sdk/PROTOCOL.md. They are built into this package so that a Go program
// that ships its worker program can write the library beside it at start,
// at the version of offload it was built with, rather than keep a copy:
//
//	dir, _ := os.MkdirTemp("", "worker")
//	_, err := sdk.WriteTo(dir, sdk.Python) // dir/offload_worker.py
//	// write worker.py into dir too; Command: []string{"python3", dir + "/worker.py"}
package sdk

import (
	"embed"
	"fmt"
	"os"
	"path"
	"path/filepath"
)

// The SDKs, by their path in this directory.
const (
	Python = "python/offload_worker.py"
	Node   = "node/offload-worker.mjs"
)

//go:embed python/offload_worker.py node/offload-worker.mjs
var files embed.FS

// File returns the content of the SDK at name (Python or Node).
func File(name string) ([]byte, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("sdk: no SDK %q (want sdk.Python or sdk.Node)", name)
	}
	return b, nil
}

// WriteTo writes the SDK at name (Python or Node) into dir, under its own
// file name, which is how the worker imports it, read-only, and returns
// its path there.
func WriteTo(dir, name string) (string, error) {
	b, err := File(name)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, path.Base(name))
	if err := os.WriteFile(dst, b, 0o444); err != nil {
		return "", fmt.Errorf("sdk: %w", err)
	}
	return dst, nil
}
