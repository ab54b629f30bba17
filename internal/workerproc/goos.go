package workerproc

import "runtime"

// goos names the platform in ErrUnsupported.
const goos = runtime.GOOS
