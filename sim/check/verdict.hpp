// verdict: what a run's results mean, and whether they are what was expected.
//
// The one place a verdict is decided: a run's record, the report, `check`
// and `explore` all ask these functions.
//  * A run is a `violation` when an invariant broke, else `inconclusive`
//    when it could not finish (sim/world/run_guard.hpp), else a `pass`.
//  * Several runs (the variants of a lease scenario) together: a violation
//    anywhere, else inconclusive anywhere, else a pass.
//  * A run meets its expectation when the verdicts are equal and, for a
//    violation, every invariant the expectation names broke. So an
//    inconclusive run meets only an expected "inconclusive": a run that could
//    not finish is never a pass, and never the violation a scenario expects.
//  * A counterexample (what explore reports) is a broken invariant the
//    expectation does not allow: any, when it expects a pass; one it does not
//    name, when it names the invariants it expects to break.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "sim/check/results.hpp"

namespace admit::check {

// What a scenario expects of one run (views into the scenario).
struct expectation {
  std::string_view verdict;  // "pass", "violation" or "inconclusive"
  std::span<const std::string> violated;
};

inline bool any_broken(std::span<const invariant_result> invariants) {
  return std::any_of(invariants.begin(), invariants.end(), [](const invariant_result& r) { return !r.holds; });
}

inline const char* verdict_of(std::span<const invariant_result> invariants, bool inconclusive) {
  if (any_broken(invariants)) return "violation";
  return inconclusive ? "inconclusive" : "pass";
}

// The verdict of several runs, from whether any broke an invariant and whether any could not finish.
inline const char* combined_verdict(bool any_violation, bool any_inconclusive) {
  return any_violation ? "violation" : any_inconclusive ? "inconclusive" : "pass";
}

inline bool meets(const expectation& e, std::span<const invariant_result> invariants, bool inconclusive) {
  const std::string_view got = verdict_of(invariants, inconclusive);
  if (e.verdict != got) return false;
  if (got != "violation") return true;
  for (const auto& name : e.violated) {
    const auto it = std::find_if(invariants.begin(), invariants.end(),
                                 [&](const invariant_result& r) { return r.name == name; });
    if (it == invariants.end() || it->holds) return false;
  }
  return true;
}

inline bool is_counterexample(const expectation& e, std::span<const invariant_result> invariants) {
  for (const auto& r : invariants) {
    if (r.holds) continue;
    if (e.verdict == "pass") return true;
    if (!e.violated.empty() && std::find(e.violated.begin(), e.violated.end(), r.name) == e.violated.end())
      return true;
  }
  return false;
}

}  // namespace admit::check
