// fuzz_support: what the fuzz targets share.
//
// Every input has exactly two acceptable ends: a scenario (and, for a run, a
// report) or a scenario_error, which the CLI turns into exit 2 with a one-line
// message. Anything else is a finding: another exception, an internal
// assertion, a crash, a hang past libFuzzer's -timeout, or a sanitizer report
// (the sanitized build aborts on the first one: -fno-sanitize-recover=all).
// A finding aborts with one line that says what broke, so libFuzzer saves
// the input as a crash artifact and the regression runner fails on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/scenario/duration.hpp"
#include "sim/scenario/loader.hpp"

namespace admit::fuzz {

using json = nlohmann::ordered_json;

[[noreturn]] inline void finding(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s: FINDING: %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

// A scenario_error must be what the CLI can print as one line
// "FILE: /json/path: expected ..., got ...".
inline void check_error_message(const char* target, const scenario::scenario_error& e) {
  const std::string_view what = e.what();
  if (e.path.empty() || e.path.front() != '/')
    finding(target, "scenario_error whose path is not a JSON Pointer: \"" + e.path + "\"");
  if (what.size() <= e.path.size()) finding(target, "scenario_error without a message after its path");
  if (what.find('\n') != std::string_view::npos || what.find('\r') != std::string_view::npos)
    finding(target, "scenario_error message spans several lines: " + std::string(what));
}

// The bounds that keep one fuzzed run short. They are applied to the
// scenario document, which is then validated again by the loader, so every
// run is of a scenario that `admitsim run` would accept as a file.
inline constexpr std::int64_t max_events_cap = 200'000;
inline constexpr std::int64_t horizon_cap_ns = 3600LL * 1'000'000'000;  // one hour of virtual time
inline constexpr std::int64_t arrivals_count_cap = 1'000;               // per generator

inline std::int64_t duration_or(const json& obj, const char* key, std::int64_t fallback) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return fallback;
  return scenario::parse_duration_ns(it->get<std::string>()).value_or(fallback);
}

// `doc` is a document the loader has accepted.
inline void bound_for_fuzzing(json& doc) {
  if (!doc.is_object()) return;
  json& checks = doc["checks"];
  if (checks.is_null()) checks = json::object();
  if (!checks.is_object()) return;
  const auto me = checks.find("max_events");
  if (me == checks.end() || !me->is_number_integer() || me->get<std::int64_t>() > max_events_cap)
    checks["max_events"] = max_events_cap;
  // A shorter horizon, but never below a liveness horizon (which must not
  // exceed the horizon): the loader checks faults against that one.
  const std::int64_t horizon = duration_or(checks, "horizon", 24LL * 3600 * 1'000'000'000);
  const std::int64_t liveness = duration_or(checks, "liveness_horizon", 0);
  const std::int64_t bounded = std::max(std::min(horizon, horizon_cap_ns), liveness);
  if (bounded != horizon) checks["horizon"] = scenario::format_duration(bounded);
  // Request generators: fewer requests each (their last arrival only moves earlier).
  const auto wl = doc.find("workload");
  if (wl == doc.end() || !wl->is_object()) return;
  const auto gens = wl->find("arrivals");
  if (gens == wl->end() || !gens->is_array()) return;
  for (json& g : *gens) {
    if (!g.is_object()) continue;
    const auto count = g.find("count");
    if (count != g.end() && count->is_number_integer() && count->get<std::int64_t>() > arrivals_count_cap)
      *count = arrivals_count_cap;
  }
}

}  // namespace admit::fuzz
