package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkSubprocessIdleRSSMinimal is BenchmarkSubprocessIdleRSS for
// the smallest program with a Subprocess pool (testdata/idleworker), so
// that the figure is offload's own and not the test binary's: built as go
// build makes it (cgo=default: a dynamically linked binary, with libc
// mapped) and with CGO_ENABLED=0 (static). It needs the go command.
func BenchmarkSubprocessIdleRSSMinimal(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build testdata/idleworker")
	}
	for _, cgo := range []string{"default", "0"} {
		b.Run("cgo="+cgo, func(b *testing.B) {
			bin := filepath.Join(b.TempDir(), "idleworker")
			build := exec.Command(gocmd, "build", "-o", bin, "./testdata/idleworker")
			build.Env = os.Environ()
			if cgo != "default" {
				build.Env = append(build.Env, "CGO_ENABLED="+cgo)
			}
			if out, err := build.CombinedOutput(); err != nil {
				b.Fatalf("build idleworker: %v\n%s", err, out)
			}
			var samples []resident
			for b.Loop() {
				out, err := exec.Command(bin).Output()
				if err != nil {
					b.Fatalf("idleworker: %v", err)
				}
				m, err := parseResident(string(out))
				if err != nil {
					b.Fatalf("idleworker: %v: %q", err, out)
				}
				samples = append(samples, m)
			}
			reportResident(b, samples)
		})
	}
}
