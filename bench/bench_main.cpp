#include "bench/bench_main.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <unistd.h>
#include <utility>

namespace admit::bench {

namespace {

// The console reporter, also keeping items_per_second of every plain
// (non-aggregate) run by (function name, argument list).
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  explicit ratio_reporter(OutputOptions options) : ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& reports) override {
    ConsoleReporter::ReportRuns(reports);
    for (const Run& r : reports) {
      if (r.error_occurred) continue;
      auto it = r.counters.find("items_per_second");
      if (it == r.counters.end()) continue;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type == Run::RT_Iteration)
        rates_[{r.run_name.function_name, r.run_name.args}].push_back(it->second.value);
      else if (median)  // all there is under --benchmark_report_aggregates_only
        medians_[{r.run_name.function_name, r.run_name.args}] = it->second.value;
    }
  }

  // With repetitions: each benchmark's median and best items_per_second. On
  // a shared machine the best repetition is the least disturbed one.
  void print_summary() {
    bool header = false;
    for (const auto& [key, v] : rates_) {
      if (v.size() < 2) continue;
      if (!header) {
        std::printf("\nitems_per_second over repetitions (median; best = fastest repetition):\n");
        header = true;
      }
      const std::string args = key.second.empty() ? "" : "/" + key.second;
      std::printf("  %s%s: median %.4g, best %.4g (%zu repetitions)\n", key.first.c_str(), args.c_str(), median(v),
                  *std::max_element(v.begin(), v.end()), v.size());
    }
    std::fflush(stdout);
  }

  void print_ratios(const std::vector<ratio_pair>& pairs) {
    for (const auto& [key, value] : medians_)
      if (rates_.find(key) == rates_.end()) rates_[key].push_back(value);
    bool header = false;
    for (const ratio_pair& p : pairs) {
      for (auto& [key, num] : rates_) {
        if (key.first != p.numerator) continue;
        auto den = rates_.find({p.denominator, key.second});
        if (den == rates_.end()) continue;
        if (!header) {
          std::printf("\nRatios of items_per_second in this process (median over repetitions; "
                      "best: the fastest repetition of each):\n");
          header = true;
        }
        const double n = median(num);
        const double d = median(den->second);
        const double nb = *std::max_element(num.begin(), num.end());
        const double db = *std::max_element(den->second.begin(), den->second.end());
        const std::string args = key.second.empty() ? "" : "/" + key.second;
        std::printf("  %s%s / %s%s = %.3f  (%.4g / %.4g items/s)  best %.3f  (%.4g / %.4g)\n",
                    p.numerator.c_str(), args.c_str(), p.denominator.c_str(), args.c_str(), d > 0 ? n / d : 0.0,
                    n, d, db > 0 ? nb / db : 0.0, nb, db);
      }
    }
    std::fflush(stdout);
  }

 private:
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
  }

  // Keyed by (function name, argument list); "64" sorts before "4096".
  struct key_less {
    bool operator()(const std::pair<std::string, std::string>& a,
                    const std::pair<std::string, std::string>& b) const {
      if (a.first != b.first) return a.first < b.first;
      if (a.second.size() != b.second.size()) return a.second.size() < b.second.size();
      return a.second < b.second;
    }
  };
  std::map<std::pair<std::string, std::string>, std::vector<double>, key_less> rates_;
  std::map<std::pair<std::string, std::string>, double, key_less> medians_;
};

}  // namespace

int run_benchmarks(int argc, char** argv, const std::vector<ratio_pair>& pairs) {
  const std::vector<std::string> args(argv, argv + argc);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Colour only on a terminal and unless --benchmark_color=false was given;
  // tabular counters, as the library's own console reporter does.
  bool color = isatty(STDOUT_FILENO) != 0;
  for (const std::string& a : args) {
    if (a == "--benchmark_color=false" || a == "--benchmark_color=no") color = false;
  }
  ratio_reporter reporter(color ? benchmark::ConsoleReporter::OO_ColorTabular : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_summary();
  reporter.print_ratios(pairs);
  benchmark::Shutdown();
  return 0;
}

}  // namespace admit::bench
