// own_gate_run: runs a FIFO scenario against ring_gate (my_gate.hpp), the
// team's own core, through the installed admitsim library, and writes the
// report admitsim's CLI would write, with its "gate_core" key naming the core.
//
//   own_gate_run SCENARIO [--seed N] [--out PATH|-] [--html PATH]
//   own_gate_run SCENARIO --seeds N      # a seed search: seeds 0 .. N-1, as admitsim explore
//
// Exit status, as admitsim run's: 0 the run came out as the scenario
// expects, 1 it did not (a violation where a pass was expected), 2 bad
// input (an unreadable or invalid scenario, one an own core cannot run, a
// bad option or output path; one line on standard error). The report goes to
// --out (default: standard output), written as admitsim writes files: a
// regular file through a temporary file renamed over it, a device or FIFO in
// place, never a partial report under the name; --html writes admitsim's
// HTML page beside it. With --seeds the program searches seeds 0 to N-1
// (1 to 100000) through admitsim's explorer with the same core and prints
// one line: how many seeds ran, how many broke an invariant the scenario does
// not expect to break, and the first such seed (exit 1 when there is one).
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "my_gate.hpp"
#include "reports/html.hpp"
#include "reports/output_file.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/own_gate.hpp"
#include "sim/world/world.hpp"

#ifdef RING_GATE_BROKEN
constexpr const char* core_name = "example::ring_gate_broken";
#else
constexpr const char* core_name = "example::ring_gate";
#endif

namespace {

// Seeds 0 .. n-1 of `sc` through admitsim's explorer, every gate running `og`'s core.
int search(const admit::scenario::scenario& sc, std::uint64_t n, const admit::world::own_gate& og) {
  admit::explore::explore_options opts;
  opts.seeds.count = n;
  opts.mode.own = &og;
  std::uint64_t ran = 0, broke = 0, errors = 0;
  std::optional<std::uint64_t> first;
  admit::explore::run_explore(sc, opts, [&](admit::explore::seed_outcome&& o) {
    ++ran;
    if (o.error) {
      ++errors;
      if (!first) first = o.seed;
      return;
    }
    if (!o.any_counterexample()) return;
    ++broke;
    if (!first) first = o.seed;
  });
  std::printf("own_gate_run: %s core=%s: %llu seeds, %llu broke an invariant unexpectedly, %llu errors",
              sc.name.c_str(), core_name, static_cast<unsigned long long>(ran), static_cast<unsigned long long>(broke),
              static_cast<unsigned long long>(errors));
  if (first) std::printf("; first seed %llu (own_gate_run FILE --seed %llu)", static_cast<unsigned long long>(*first),
                         static_cast<unsigned long long>(*first));
  std::printf("\n");
  return first ? 1 : 0;
}

int usage(const char* why) {
  std::fprintf(stderr, "own_gate_run: %s\nusage: own_gate_run SCENARIO [--seed N] [--out PATH|-] [--html PATH] | --seeds N\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, out = "-";
  std::optional<std::string> html;
  std::optional<std::uint64_t> seed, seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: own_gate_run SCENARIO [--seed N] [--out PATH|-] [--html PATH] | --seeds N\n"
                  "Runs a FIFO scenario against %s and writes admitsim's report (exit 0: as expected,\n"
                  "1: not as expected, 2: bad input).\n", core_name);
      return 0;
    }
    if ((a == "--seed" || a == "--seeds" || a == "--out" || a == "--html") && i + 1 >= argc) return usage((a + ": expected a value").c_str());
    if (a == "--seed" || a == "--seeds") {
      const std::string v = argv[++i];
      const std::uint64_t max = a == "--seed" ? UINT64_MAX : 100'000;
      std::uint64_t n = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc{} || end != v.data() + v.size() || v.empty() || n > max || (a == "--seeds" && n == 0))
        return usage((a + ": expected an integer from " + (a == "--seed" ? "0" : "1") + " to " + std::to_string(max) +
                      ", got \"" + v + "\"").c_str());
      (a == "--seed" ? seed : seeds) = n;
    } else if (a == "--out") {
      out = argv[++i];
    } else if (a == "--html") {
      html = argv[++i];
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return usage(("unknown option " + a).c_str());
    } else if (file.empty()) {
      file = a;
    } else {
      return usage("expected one scenario file");
    }
  }
  if (file.empty()) return usage("expected a scenario file");
  if (seeds && (seed || out != "-" || html)) return usage("--seeds: a search writes no report (no --seed, --out or --html)");
  if (const auto why = admit::reports::check_output(out)) {
    std::fprintf(stderr, "own_gate_run: --out %s: %s\n", out.c_str(), why->c_str());
    return 2;
  }
  if (html) {
    if (const auto why = admit::reports::check_output(*html)) {
      std::fprintf(stderr, "own_gate_run: --html %s: %s\n", html->c_str(), why->c_str());
      return 2;
    }
    if (*html == "-" || admit::reports::same_output(*html, out))
      return usage("--html: expected a file other than the report's");
  }
  try {
    const admit::scenario::file_reader read = admit::scenario::plain_file_reader();
    const std::string text = read(file);
    nlohmann::ordered_json doc;
    const admit::scenario::scenario sc =
        admit::scenario::load_scenario_text(text, doc, {admit::scenario::directory_of(file), read});
    const admit::world::own_gate og = admit::world::own_gate_of<example::ring_gate>(core_name);
    if (seeds) return search(sc, *seeds, og);
    std::vector<admit::world::run_record> runs = admit::world::run_all(sc, seed.value_or(sc.seed), {}, nullptr, &og);
    if (html) admit::reports::keep_zoom_lanes(sc, seed.value_or(sc.seed), runs, &og);
    admit::reports::report_input in;
    in.sc = &sc;
    in.source = &doc;
    in.file = file;
    in.sha256 = admit::reports::sha256_hex(text);
    bool met = true;
    for (const auto& r : runs) {
      in.runs.push_back(&r);
      met = met && admit::reports::as_expected(sc, r);
    }
    const std::string bytes = admit::reports::render_report(admit::reports::build_report(in));
    if (const auto why = admit::reports::write_output(out, bytes, "report")) {
      std::fprintf(stderr, "own_gate_run: %s: %s\n", out.c_str(), why->c_str());
      return 2;
    }
    if (html) {
      if (const auto why = admit::reports::write_output(*html, admit::reports::render_html(in), "HTML report")) {
        std::fprintf(stderr, "own_gate_run: %s: %s\n", html->c_str(), why->c_str());
        return 2;
      }
    }
    for (const auto& r : runs)
      std::fprintf(stderr, "own_gate_run: %s seed=%llu core=%s: %s\n", sc.name.c_str(),
                   static_cast<unsigned long long>(r.seed), core_name, r.verdict());
    return met ? 0 : 1;
  } catch (const std::exception& e) {  // the loader's scenario_error, a refusal (std::invalid_argument), a read
    std::fprintf(stderr, "own_gate_run: %s: %s\n", file.c_str(), e.what());
    return 2;
  }
}
