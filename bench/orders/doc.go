// Package orders measures, in Go, the two tables of the reference page's
// "copying data back and forth is not free" section: what it costs to get
// rows of JSON orders decoded and summed when the work stays on the caller,
// when the JSON bytes are sent to a worker, when a transfer.Buffer holding
// them is moved to a worker, and in the trap, when the worker decodes and
// sends every row back; and the boundary's own cost, rows or their JSON
// sent to a task that returns them as they came. Nothing imports it; it is
// all benchmarks and the tests that keep them honest:
//
//	go test ./bench/orders -run '^$' -bench . -benchmem -count 6 -timeout 60m
//
// Each benchmark reports, beside ns/op (the caller's wall time for one op):
//
//   - caller-ns/op: the time the calling goroutine itself is busy on the
//     op, the Go counterpart of the page's "main thread blocked". A Go
//     caller parks while a worker runs, and a parked goroutine costs
//     nothing, so this counts only the stretches where it runs: the whole
//     op when it decodes in place; otherwise Submit (which encodes the
//     input for a Subprocess pool and hands Buffers over) plus the work
//     after Wait returns (summing the rows the trap brought back).
//   - cpu-ns/op: the CPU time of the caller's whole process on the op
//     (CLOCK_PROCESS_CPUTIME_ID): every goroutine, the garbage collector
//     and the runtime included. The pool's own goroutines decode a
//     Subprocess task's result while the caller is parked, so for the trap
//     this, not caller-ns, is what the caller's process pays; for an
//     InProcess pool it also contains the task itself, since goroutine
//     workers run on the caller's CPUs.
//   - copied-B/op (Subprocess only): the bytes that crossed the process
//     boundary, measured as the growth of the worker processes' read and
//     write counts (rchar + wchar in /proc/PID/io): the call frame the
//     worker read plus the reply it wrote. In process nothing crosses a
//     boundary: a []byte or []Order is passed as its slice header and a
//     Buffer by pointer (TestInProcessSharesInput checks the first).
package orders
