#include "sim/cli/explore_orders.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/trace_file.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/explore/exhaustive.hpp"

namespace admit::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

json broken_json(const explore::run_outcome& r) {
  json broken = json::array();
  for (const auto& b : r.broken) broken.push_back(break_json(b));
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
  return (fs::path(req.out_dir) / (req.base->name + "-orders.json")).string();
}

int run_orders(const orders_request& req) {
  if (req.order) return replay_one(req);

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

  json out;
  out["format"] = "admitsim-explore/1";
  json scj;
  scj["name"] = req.base->name;
  scj["file"] = req.file;
  scj["sha256"] = reports::sha256_hex(req.bytes);
  out["scenario"] = std::move(scj);
  out["mode"] = "exhaustive";
  out["seed"] = sum.seed;
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
  if (const auto why = write_output(path, out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n")) throw input_error{path, *why};

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
