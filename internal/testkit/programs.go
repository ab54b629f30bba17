package testkit

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Program is a program of another language that tests run as a pool's
// workers (pool.Extern), through its SDK in sdk/.
type Program struct {
	Name   string // "python", "node": a subtest's name
	Binary string // the program: "python3", "node"
	Worker string // its test worker in sdk/testdata, which serves the same tasks in every language
}

// Programs are the languages with an SDK in sdk/.
var Programs = []Program{
	{Name: "python", Binary: "python3", Worker: "worker.py"},
	{Name: "node", Binary: "node", Worker: "worker.mjs"},
}

// Command is the command line that runs script with p's program: script
// is a file of sdk/testdata, or an absolute path. The program must be
// installed: CI installs python3 and node (.ci/run), and a test that
// skipped without them would hide a broken SDK.
func (p Program) Command(tb testing.TB, script string) []string {
	tb.Helper()
	path, err := exec.LookPath(p.Binary)
	if err != nil {
		tb.Fatalf("%s is needed for the %s SDK's tests (apt-get install python3 nodejs): %v", p.Binary, p.Name, err)
	}
	if !filepath.IsAbs(script) {
		if script, err = SDKTestdata(script); err != nil {
			tb.Fatal(err)
		}
	}
	return []string{path, script}
}

// SDKTestdata is the absolute path of file name in sdk/testdata, found
// from the working directory up, so that the tests of any package (of
// any module of the repository) reach it.
func SDKTestdata(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		path := filepath.Join(dir, "sdk", "testdata", name)
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no sdk/testdata/" + name + " above the working directory")
		}
		dir = parent
	}
}
