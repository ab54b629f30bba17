//go:build !linux

package shmbuf

// runChild has no roles off Linux: the cross-process tests need memfd.
func runChild(role string) int { return 2 }
