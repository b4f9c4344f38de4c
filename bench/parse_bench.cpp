// parse_bench: wall and CPU time of reading large JSON, against issue targets.
//
// Not a Google Benchmark binary: each case is one large input read once (the
// point is how time grows with the size of one document, not a rate over many
// small ones). It generates its inputs in memory, times them with the
// process's CPU clock and the monotonic clock (both read only here, outside
// any simulation), and prints one line per case with its target.
//
//   parse_bench            the four cases of docs/performance.md ("Parsing")
//   parse_bench file PATH  one file read by both parsers
//   parse_bench before     the same growth measured with nlohmann's callback
//                          parser (what load_scenario_text used before), on
//                          small inputs: doubling the input quadruples the time
//
// Exits 1 if a case misses its target (so a run shows a regression at once),
// 0 otherwise.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"

namespace {

using json = nlohmann::ordered_json;

double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A valid scenario of n explicit requests, one FIFO gate.
std::string explicit_requests(long n) {
  std::string s = R"({"name": "parse_bench", "seed": 1,
  "gate": {"kind": "fifo", "max_active": 8, "max_waiting": 1000000, "wait_deadline": "5s"},
  "workload": {"requests": [)";
  s.reserve(static_cast<std::size_t>(n) * 48 + 256);
  for (long i = 0; i < n; ++i) {
    if (i) s += ",\n";
    s += R"({"id": "r)" + std::to_string(i) + R"(", "at": ")" + std::to_string(i) + R"(ms", "service": "3ms"})";
  }
  s += "]},\n  \"checks\": {\"max_events\": 100000000, \"horizon\": \"30h\"}}";
  return s;
}

// About `bytes` of [{},{},...]: what the loader must refuse (not an object).
std::string junk_array(std::size_t bytes) {
  std::string s = "[";
  while (s.size() + 3 < bytes) s += "{},";
  s += "{}]";
  return s;
}

// About `bytes` of report-shaped JSON: a header, the embedded scenario and a
// long trace of small objects, as admitsim run writes for a long run.
std::string report_like(std::size_t bytes) {
  std::string s = R"({"format": "admitsim-report/1", "seed": 1, "scenario": {"file": "x.json", "sha256": "0", "source": )";
  s += R"({"name": "x", "gate": {"kind": "fifo", "max_active": 8}, "workload": {"requests": [{"id": "a", "at": "0ms"}]}}}, )";
  s += R"("runs": [{"verdict": "pass", "trace": [)";
  s.reserve(bytes + 256);
  for (long i = 0; s.size() < bytes; ++i) {
    if (i) s += ',';
    s += R"({"t_ns": )" + std::to_string(i * 1000) + R"(, "kind": "gate", "what": "admitted request r)" +
         std::to_string(i) + R"(", "gate": "g", "in_flight": 7, "waiting": [1, 2, 3]})";
  }
  s += "]}]}";
  return s;
}

struct timing {
  double wall_s;
  double cpu_s;
};

template <class F>
timing timed(F&& f) {
  const double c0 = cpu_s();
  const auto w0 = std::chrono::steady_clock::now();
  f();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count(), cpu_s() - c0};
}

bool report(const char* what, std::size_t bytes, timing t, double target_s) {
  const bool ok = t.wall_s < target_s;
  std::printf("%-52s %9.1f MB  wall %7.3f s  cpu %7.3f s  target < %.0f s  %s\n", what,
              static_cast<double>(bytes) / 1e6, t.wall_s, t.cpu_s, target_s, ok ? "met" : "MISSED");
  return ok;
}

// The old path: nlohmann's callback parser with a callback that keeps everything.
void callback_parse(std::string_view text) {
  const json doc = json::parse(text.begin(), text.end(), [](int, json::parse_event_t, json&) { return true; });
  (void)doc;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "before") {
    for (const long n : {20'000L, 40'000L, 80'000L}) {
      const std::string text = explicit_requests(n);
      const timing t = timed([&] { callback_parse(text); });
      std::printf("callback parser, %6ld explicit requests %9.1f MB  wall %7.3f s  cpu %7.3f s\n", n,
                  static_cast<double>(text.size()) / 1e6, t.wall_s, t.cpu_s);
    }
    for (const long n : {20'000L, 40'000L, 80'000L}) {
      const std::string text = explicit_requests(n);
      const timing t = timed([&] { (void)admit::scenario::parse_json_text(text); });
      std::printf("SAX builder,     %6ld explicit requests %9.1f MB  wall %7.3f s  cpu %7.3f s\n", n,
                  static_cast<double>(text.size()) / 1e6, t.wall_s, t.cpu_s);
    }
    return 0;
  }
  if (mode == "file" && argc > 2) {
    // A given file (a report, a scenario) read both ways.
    std::ifstream in(argv[2], std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const timing sax = timed([&] { (void)admit::scenario::parse_json_text(text, {128}); });
    std::printf("SAX builder      %9.1f MB  wall %7.3f s  cpu %7.3f s\n", static_cast<double>(text.size()) / 1e6, sax.wall_s, sax.cpu_s);
    const timing cb = timed([&] { callback_parse(text); });
    std::printf("callback parser  %9.1f MB  wall %7.3f s  cpu %7.3f s\n", static_cast<double>(text.size()) / 1e6, cb.wall_s, cb.cpu_s);
    return 0;
  }
  if (!mode.empty()) {
    std::fprintf(stderr, "usage: parse_bench [before | file PATH]\n");
    return 2;
  }
  bool ok = true;
  for (const auto& [n, target] : {std::pair{1'000'000L, 5.0}, std::pair{100'000L, 1.0}}) {
    const std::string text = explicit_requests(n);
    std::size_t loaded = 0;
    const timing t = timed([&] { loaded = admit::scenario::load_scenario_text(text).requests.size(); });
    if (loaded != static_cast<std::size_t>(n)) {
      std::fprintf(stderr, "parse_bench: loaded %zu requests, expected %ld\n", loaded, n);
      return 1;
    }
    const std::string what = "check: " + std::to_string(n) + " explicit requests (load_scenario_text)";
    ok = report(what.c_str(), text.size(), t, target) && ok;
  }
  {
    const std::string text = junk_array(900'000);
    bool refused = false;
    const timing t = timed([&] {
      try {
        (void)admit::scenario::load_scenario_text(text);
      } catch (const admit::scenario::scenario_error&) {
        refused = true;
      }
    });
    if (!refused) {
      std::fprintf(stderr, "parse_bench: the junk array was not refused\n");
      return 1;
    }
    ok = report("refuse: 900 KB array of {} (load_scenario_text)", text.size(), t, 1.0) && ok;
  }
  {
    const std::string text = report_like(100'000'000);
    const timing t = timed([&] { (void)admit::scenario::parse_json_text(text, {128}); });
    ok = report("replay-scale: 100 MB report (parse_json_text, depth 128)", text.size(), t, 10.0) && ok;
    const timing d = timed([&] {
      const json doc = json::parse(text);
      (void)doc;
    });
    report("  for comparison: the same with plain json::parse", text.size(), d, 10.0);
  }
  return ok ? 0 : 1;
}
