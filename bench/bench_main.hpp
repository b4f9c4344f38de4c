// bench_main: runs a binary's benchmarks, then prints, with repetitions,
// each benchmark's median and best (fastest repetition) items_per_second,
// and the ratios between benchmarks that the binary declares, computed from
// the runs it just made.
//
// Why. A ratio between two rates measured in separate processes (or on
// separate days) mixes in machine noise; the kernel's target is stated as a
// ratio to a bare heap loop "in the same run". So each binary names pairs of
// benchmark families and, after the console table, gets one line per pair
// and argument list: "numerator/args / denominator/args = r", from the
// median items_per_second over repetitions (with
// --benchmark_report_aggregates_only=true, the reported median aggregate).
#pragma once

#include <string>
#include <vector>

namespace admit::bench {

struct ratio_pair {
  std::string numerator;    // benchmark function name, e.g. "BM_kernel_timer_wait_callback"
  std::string denominator;  // e.g. "BM_bare_heap_loop"; matched on equal argument lists
};

// Runs every registered benchmark (honouring the usual --benchmark_* flags)
// and prints the ratios. Returns the process exit code.
int run_benchmarks(int argc, char** argv, const std::vector<ratio_pair>& pairs);

}  // namespace admit::bench
