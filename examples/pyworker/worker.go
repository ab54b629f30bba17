package main

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
)

// The Python program is built into the binary and written out at start,
// so that the service finds it whatever its working directory (go run
// from the repository's root, go test from this directory, the binary
// copied elsewhere), as a service ships its assets. offload_worker.py is
// a copy of sdk/python/offload_worker.py, the SDK: go:embed reads only
// files under this directory, and the SDK is one file meant to be
// copied beside a worker (TestSDKCopyIsCurrent keeps it the SDK's).
//
//go:embed worker.py offload_worker.py
var workerFiles embed.FS

// writeWorker writes the Python worker and its SDK into dir and returns
// the worker's path there. Python puts the script's directory first on
// its import path, so that worker.py imports offload_worker from beside
// it.
func writeWorker(dir string) (string, error) {
	entries, err := workerFiles.ReadDir(".")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := workerFiles.ReadFile(e.Name())
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o444); err != nil {
			return "", fmt.Errorf("pyworker: writing the Python worker: %w", err)
		}
	}
	return filepath.Join(dir, "worker.py"), nil
}
