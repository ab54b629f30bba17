// Package publicapi holds one module-wide test: what go doc prints for a
// public package (every package outside internal/) names no internal
// package, so a user reads each public API without the internals.
package publicapi
