package cancel

import "runtime"

// goos names the platform in ErrUnsupported.
const goos = runtime.GOOS
