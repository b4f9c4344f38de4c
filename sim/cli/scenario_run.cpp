#include "sim/cli/scenario_run.hpp"

#include <chrono>

#include "gate/admit_assert.hpp"
#include "reports/html.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

namespace admit::cli {

namespace {

// The scenario once per lease variant (each a one-variant copy), or as it is:
// run_all runs the variants in this order, so timing the parts one by one
// gives each run its own wall time and the same records.
std::vector<scenario::scenario> parts_by_variant(const scenario::scenario& sc) {
  for (std::size_t i = 0; i < sc.gates.size(); ++i) {
    const auto& g = sc.gates[i];
    if (g.kind != scenario::gate_kind::lease || scenario::run_count(g.lease) < 2) continue;
    std::vector<scenario::scenario> parts;
    for (scenario::lease_params& one : scenario::one_run_each(g.lease)) {
      parts.push_back(sc);
      parts.back().gates[i].lease = std::move(one);
    }
    return parts;
  }
  return {sc};
}

}  // namespace

loaded load_text(const std::string& file, std::string bytes) {
  loaded l;
  l.file = file;
  l.bytes = std::move(bytes);
  l.sc = cli::parse_scenario(file, l.bytes, l.doc);  // one linear-time parse
  return l;
}

loaded load_file(const std::string& file) { return load_text(file, cli::read_input(file, "scenario file")); }

run_output run_one(const loaded& l, std::uint64_t seed, bool html, check::trace_sink* trace_to) {
  run_output out;
  try {
    for (const scenario::scenario& part : parts_by_variant(l.sc)) {
      const auto t0 = std::chrono::steady_clock::now();  // wall time for the summary line only
      std::vector<world::run_record> runs = world::run_all(part, seed, {}, trace_to);
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (auto& r : runs) {
        out.runs.push_back(std::move(r));
        out.wall_s.push_back(wall_s / static_cast<double>(runs.size()));
      }
    }
    // A page zooms onto a run's worst moment and first violation with the lanes of the requests
    // active then; a long run kept only its first lanes, so it runs again, the same run, keeping those.
    if (html) reports::keep_zoom_lanes(l.sc, seed, out.runs);
  } catch (const admit::assertion_failure& e) {
    throw run_error{l.file, "internal assertion failed with seed " + std::to_string(seed) + ": " + e.what() +
                                " (replay: " + reports::replay_command(l.file, seed) + ")"};
  } catch (const std::invalid_argument& e) {
    throw input_error{l.file, e.what()};
  }
  reports::report_input in;
  in.sc = &l.sc;
  in.source = &l.doc;
  in.file = l.file;
  in.sha256 = reports::sha256_hex(l.bytes);
  for (const auto& r : out.runs) in.runs.push_back(&r);
  out.report_bytes = reports::render_report(reports::build_report(in));
  if (html) out.html_bytes = reports::render_html(in);
  out.met = true;
  for (const auto& r : out.runs) out.met = out.met && reports::as_expected(l.sc, r);
  return out;
}

}  // namespace admit::cli
