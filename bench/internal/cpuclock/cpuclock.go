// Package cpuclock reads the CPU-time clocks the benchmarks report: the
// whole process's and the calling thread's. Only the benchmarks and
// their tests import it.
package cpuclock
