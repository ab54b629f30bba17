// Package chunking holds the benchmarks of package budget: the reference
// experiment (2,000,000 small float items run in one go or in 5 ms chunks,
// under GOMAXPROCS=1 and the default, watched by a 1 ms ticker), the
// chunker's overhead measured in back-to-back pairs (BenchmarkOverhead) and
// items of wildly uneven cost (BenchmarkUneven). Run them with
//
//	go test -run '^$' -bench . -count 6 ./bench/chunking
//
// and compare with benchstat. Nothing imports this package.
package chunking
