package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/offloadgo/offload/sdk"
)

// The Python program is built into the binary and written out at start,
// with the SDK of the offload it was built with (package sdk), so that the
// service finds them whatever its working directory (go run from the
// repository's root, go test from this directory, the binary copied
// elsewhere), as a service ships its assets.
//
//go:embed worker.py
var workerPy []byte

// writeWorker writes the Python worker and its SDK into dir and returns
// the worker's path there. Python puts the script's directory first on
// its import path, so that worker.py imports offload_worker from beside
// it.
func writeWorker(dir string) (string, error) {
	if _, err := sdk.WriteTo(dir, sdk.Python); err != nil {
		return "", fmt.Errorf("pyworker: writing the Python SDK: %w", err)
	}
	worker := filepath.Join(dir, "worker.py")
	if err := os.WriteFile(worker, workerPy, 0o444); err != nil {
		return "", fmt.Errorf("pyworker: writing the Python worker: %w", err)
	}
	return worker, nil
}
