#include "sim/cli/explore_orders.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/codec/json_codec.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/trace_file.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/explore/exhaustive.hpp"
#include "sim/explore/placement.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/explore/search_summary.hpp"

namespace admit::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

json broken_json(const explore::run_outcome& r) {
  json broken = json::array();
  for (const auto& b : r.broken) broken.push_back(explore::break_record::of(b).to_json());
  return broken;
}

std::string replay_command(const orders_request& req, const std::string& variant, const explore::order& o) {
  return "admitsim explore " + reports::shell_quote(req.file) + " --order '" + explore::format_order(o) + "'" +
         (variant.empty() ? std::string() : " --variant " + variant);
}

int replay_one(const orders_request& req) {
  std::string error;
  const std::optional<explore::order> o = explore::parse_order(*req.order, error);
  if (!o) throw input_error{"--order", error};
  trace_file trace;
  if (req.trace) {
    check_trace_path(*req.trace, {{req.file, "the scenario file", true}});
    open_trace(trace, *req.trace, trace_header{req.base->name, req.file, req.base->seed, explore::format_order(*o)});
  }
  explore::run_outcome r;
  try {
    r = explore::run_in_order(*req.base, req.variant, *o, req.trace ? &trace : nullptr);
  } catch (const std::invalid_argument& e) {
    // About the file's run, as a JSON path is about the file: the order and variant, then why.
    throw input_error{req.file, "--order '" + *req.order + "'" + (req.variant.empty() ? "" : " --variant " + req.variant) +
                                    ": " + e.what()};
  }
  if (req.trace) commit_trace(trace, *req.trace);
  if (!req.quiet) {
    std::fprintf(stderr, "%s%s seed=%llu order '%s': %s (%s) requests=%llu portal_max=%lld events=%llu\n",
                 req.base->name.c_str(), variant_label(r.variant).c_str(), static_cast<unsigned long long>(req.base->seed),
                 req.order->c_str(), r.broken.empty() ? "pass" : "violation",
                 r.met ? "as expected" : "NOT as expected", static_cast<unsigned long long>(r.requests),
                 static_cast<long long>(r.portal_inflight_max), static_cast<unsigned long long>(r.events));
    for (const auto& b : r.broken)
      std::fprintf(stderr, "  %s at %lld ns: %s\n", b.name.c_str(), static_cast<long long>(b.at_ns), b.detail.c_str());
  }
  return r.met ? exit_as_expected : exit_not_expected;
}

}  // namespace

std::string orders_summary_path(const orders_request& req) {
  return (fs::path(req.out_dir) / (req.base->name + (req.placements ? "-placements.json" : "-orders.json"))).string();
}

namespace {

// The first keys of an order mode's summary: format, the scenario (name, file, sha256), mode, seed.
json summary_head(const orders_request& req, const char* mode, std::uint64_t seed) {
  json out;
  out["format"] = explore::explore_format;
  out["scenario"] = explore::scenario_ref{req.base->name, req.file, reports::sha256_hex(req.bytes)}.to_json();
  out["mode"] = mode;
  out["seed"] = seed;
  return out;
}

// "1 pause" / "2 faults (pause, crash)".
std::string faults_named(const std::vector<scenario::fault_spec>& faults) {
  if (faults.size() == 1) return std::string("1 ") + scenario::fault_row(faults.front().kind).name;
  std::string kinds;
  for (const auto& f : faults) kinds += (kinds.empty() ? "" : ", ") + std::string(scenario::fault_row(f.kind).name);
  return std::to_string(faults.size()) + " faults (" + kinds + ")";
}

std::string times_text(const std::vector<sim::vtime_ns>& at) {
  std::string s;
  for (const auto t : at) s += (s.empty() ? "" : ", ") + explore::duration_text(t);
  return s;
}

int run_placements(const orders_request& req) {
  const std::string refusal = explore::placement_refusal(*req.base);
  if (!refusal.empty()) throw input_error{req.file, refusal};
  using clock = std::chrono::steady_clock;  // for the stderr line only; never in the file
  const auto t0 = clock::now();
  explore::placement_limits lim;
  lim.max_runs = req.max_placements;
  lim.jobs = req.jobs;
  const explore::placement_summary sum = explore::enumerate_placements(*req.base, lim);
  const double wall_s = std::chrono::duration<double>(clock::now() - t0).count();

  const std::string what = faults_named(sum.faults);
  std::vector<std::string> why;
  json variants = json::array();
  std::vector<std::string> lines;
  std::uint64_t total_runs = 0;
  for (const auto& v : sum.variants) {
    total_runs += v.runs;
    const std::string of = v.variant.empty() ? "" : " of " + v.variant;
    if (v.counterexamples != 0)
      why.push_back(std::to_string(v.counterexamples) + " placements" + of +
                    " broke an invariant the expectation does not allow");
    if (!v.complete)
      why.push_back("the search" + of + " stopped at --max-placements " + std::to_string(lim.max_runs) +
                    " runs: it says nothing of every placement (inconclusive)");
    if (v.inconclusive != 0)
      why.push_back(std::to_string(v.inconclusive) + " placements" + of + " could not finish (inconclusive)");
    // The sentence a reader can sign, or what stands in its way.
    std::string statement;
    if (v.counterexamples != 0 || v.violating != 0)
      statement = "broke in " + std::to_string(v.violating) + " of " + std::to_string(v.placements) + " placements of " + what;
    else if (v.complete && v.inconclusive == 0)
      statement = "held for every placement of " + what + " just before and after each instant its run acts (" +
                  std::to_string(v.placements) + " placements; " + std::to_string(v.instants_fault_free) +
                  " instants in the run without it)";
    else
      statement = "no violation in the " + std::to_string(v.placements) + " placements of " + what +
                  " that ran, but not every placement was judged";
    json vj;
    vj["variant"] = v.variant;
    vj["runs"] = v.runs;
    vj["placements"] = v.placements;
    vj["instants_fault_free"] = v.instants_fault_free;
    vj["skipped_past_liveness_horizon"] = v.skipped_past_horizon;
    vj["complete"] = v.complete;
    vj["violating_placements"] = v.violating;
    vj["counterexample_placements"] = v.counterexamples;
    vj["inconclusive_placements"] = v.inconclusive;
    vj["statement"] = statement;
    json findings = json::array();
    std::string first_file;
    for (std::size_t i = 0; i < v.findings.size(); ++i) {
      const auto& f = v.findings[i];
      json fj;
      json at = json::array();
      for (const auto t : f.at_ns) at.push_back(t);
      fj["at_ns"] = std::move(at);
      fj["counterexample"] = f.outcome.counterexample;
      fj["broken"] = broken_json(f.outcome);
      if (i == 0) {
        // The first violating placement as a scenario file admitsim run runs.
        scenario::scenario file = explore::placed(*req.base, v.variant, f.at_ns);
        // Focused on what broke, as the matrix writes its unshrunk counterexamples: run exits 0 when it breaks again.
        file.expect = scenario::expect_spec{};
        file.expect.verdict = "violation";
        file.expect.violated = {f.outcome.broken.front().name};
        file.name = req.base->name.substr(0, 40) + (v.variant.empty() ? "" : "-" + v.variant.substr(0, 12)) + "-placed";
        file.description = "A placement of " + what + " by admitsim explore --placements from " + req.file + " at " +
                           times_text(f.at_ns) + ". " + req.base->description;
        first_file = (fs::path(req.out_dir) / (file.name + ".json")).string();
        if (const auto why_not = write_output(first_file, explore::render_scenario(file))) throw input_error{first_file, *why_not};
        fj["scenario"] = first_file;
      }
      findings.push_back(std::move(fj));
    }
    vj["findings"] = std::move(findings);
    vj["findings_omitted"] = v.violating - v.findings.size();
    variants.push_back(std::move(vj));
    lines.push_back("  " + (v.variant.empty() ? std::string("runs") : "runs of " + v.variant) + ": " + statement +
                    " in " + std::to_string(v.runs) + " runs" +
                    (v.findings.empty() ? std::string()
                                        : "; first at " + times_text(v.findings.front().at_ns) + ": " +
                                              v.findings.front().outcome.broken.front().name + " (" + first_file + ")"));
  }
  const int rc = why.empty() ? exit_as_expected : exit_not_expected;

  json out = summary_head(req, "placements", sum.seed);
  json bounds;
  bounds["max_placements"] = lim.max_runs;
  bounds["instants"] = "1ns before and after each trace entry of the run with the faults placed before it"
                       " (and each Redis entry plus one lease)";
  out["bounds"] = std::move(bounds);
  json fj = json::array();
  for (std::size_t i = 0; i < sum.faults.size(); ++i) {
    json f;
    f["kind"] = scenario::fault_row(sum.faults[i].kind).name;
    f["schedule_index"] = i;
    fj.push_back(std::move(f));
  }
  out["faults"] = std::move(fj);
  out["variants"] = std::move(variants);
  json ex;
  ex["code"] = rc;
  ex["why"] = why;
  out["exit"] = std::move(ex);
  const std::string path = orders_summary_path(req);
  if (const auto why_not = write_output(path, codec::render_json(out)))
    throw input_error{path, *why_not};
  if (!req.quiet) {
    std::fprintf(stderr, "explore %s --placements: seed %llu, %s: %llu runs on %u threads in %.2fs -> %s\n",
                 req.file.c_str(), static_cast<unsigned long long>(sum.seed), what.c_str(),
                 static_cast<unsigned long long>(total_runs), std::max(1u, lim.jobs), wall_s, path.c_str());
    for (const auto& l : lines) std::fprintf(stderr, "%s\n", l.c_str());
    for (const auto& w : why) std::fprintf(stderr, "  not as expected: %s\n", w.c_str());
  }
  return rc;
}

}  // namespace

int run_orders(const orders_request& req) {
  if (req.order) return replay_one(req);
  if (req.placements) return run_placements(req);

  using clock = std::chrono::steady_clock;  // for the stderr line only; never in the file
  const auto t0 = clock::now();
  explore::exhaustive_limits lim;
  lim.max_delays = req.max_delays;
  lim.max_orders = req.max_orders;
  lim.jobs = req.jobs;
  const explore::exhaustive_summary sum = explore::enumerate_orders(*req.base, lim);
  const double wall_s = std::chrono::duration<double>(clock::now() - t0).count();

  std::vector<std::string> why;
  json variants = json::array();
  std::uint64_t total_orders = 0;
  for (const auto& v : sum.variants) {
    total_orders += v.orders;
    if (v.counterexample_orders != 0)
      why.push_back(std::to_string(v.counterexample_orders) + " orders" + (v.variant.empty() ? "" : " of " + v.variant) +
                    " broke an invariant the expectation does not allow");
    // A cut enumeration judged only the orders it ran: no pass (as a cut --placements search).
    if (!v.complete)
      why.push_back("the enumeration" + (v.variant.empty() ? std::string() : " of " + v.variant) +
                    " stopped at --max-orders " + std::to_string(lim.max_orders) +
                    " before every order within the delay bound ran (inconclusive)");
    json vj;
    vj["variant"] = v.variant;
    vj["orders"] = v.orders;
    vj["distinct_orderings"] = v.distinct_fingerprints;
    vj["complete"] = v.complete;
    vj["choice_points_default"] = v.choice_points_default;
    vj["choice_points_max"] = v.choice_points_max;
    vj["violating_orders"] = v.violating_orders;
    vj["counterexample_orders"] = v.counterexample_orders;
    json dj;
    dj["expected"] = v.default_outcome.expected_verdict;
    dj["broken"] = broken_json(v.default_outcome);
    vj["default_order"] = std::move(dj);
    json findings = json::array();
    for (const auto& f : v.findings) {
      json fj;
      fj["order"] = explore::format_order(f.path);
      fj["delays"] = f.delays;
      fj["counterexample"] = f.outcome.counterexample;
      fj["broken"] = broken_json(f.outcome);
      fj["replay"] = replay_command(req, v.variant, f.path);
      findings.push_back(std::move(fj));
    }
    vj["findings"] = std::move(findings);
    vj["findings_omitted"] = v.violating_orders - v.findings.size();
    variants.push_back(std::move(vj));
  }
  const int rc = why.empty() ? exit_as_expected : exit_not_expected;

  json out = summary_head(req, "exhaustive", sum.seed);
  json bounds;
  bounds["max_delays"] = lim.max_delays;
  bounds["max_orders"] = lim.max_orders;
  out["bounds"] = std::move(bounds);
  out["variants"] = std::move(variants);
  json ex;
  ex["code"] = rc;
  ex["why"] = why;
  out["exit"] = std::move(ex);
  const std::string path = orders_summary_path(req);
  if (const auto why = write_output(path, codec::render_json(out))) throw input_error{path, *why};

  if (!req.quiet) {
    std::fprintf(stderr,
                 "explore %s --exhaustive: seed %llu, at most %llu delays: %llu orders on %u threads in %.2fs (%.0f "
                 "orders/s) -> %s\n",
                 req.file.c_str(), static_cast<unsigned long long>(sum.seed),
                 static_cast<unsigned long long>(lim.max_delays), static_cast<unsigned long long>(total_orders),
                 std::max(1u, lim.jobs), wall_s,
                 wall_s > 0 ? static_cast<double>(total_orders) / wall_s : 0.0, path.c_str());
    for (const auto& v : sum.variants) {
      std::fprintf(stderr, "  %s: %llu distinct orders (%s), %llu choice points in the default order; %llu orders broke "
                           "an invariant (%llu counterexamples)\n",
                   v.variant.empty() ? "runs" : ("runs of " + v.variant).c_str(),
                   static_cast<unsigned long long>(v.distinct_fingerprints),
                   v.complete ? "every order within the bound"
                              : ("stopped at --max-orders " + std::to_string(lim.max_orders)).c_str(),
                   static_cast<unsigned long long>(v.choice_points_default),
                   static_cast<unsigned long long>(v.violating_orders),
                   static_cast<unsigned long long>(v.counterexample_orders));
      if (!v.findings.empty()) {
        const auto& f = v.findings.front();
        std::fprintf(stderr, "    first: %s at %lld ns after %llu delays; replay: %s\n",
                     f.outcome.broken.front().name.c_str(), static_cast<long long>(f.outcome.broken.front().at_ns),
                     static_cast<unsigned long long>(f.delays), replay_command(req, v.variant, f.path).c_str());
      }
    }
    for (const auto& w : why) std::fprintf(stderr, "  not as expected: %s\n", w.c_str());
  }
  return rc;
}

}  // namespace admit::cli
