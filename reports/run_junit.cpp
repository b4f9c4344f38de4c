#include "reports/run_junit.hpp"

#include <utility>

#include "gate/admit_assert.hpp"
#include "reports/matrix_report.hpp"
#include "reports/report.hpp"
#include "sim/check/verdict.hpp"

namespace admit::reports {

namespace {

std::string expectation_text(const check::expectation& e) {
  std::string o(e.verdict);
  for (std::size_t i = 0; i < e.violated.size(); ++i) o += (i == 0 ? " of " : ", ") + e.violated[i];
  return o;
}

std::string at_text(std::int64_t at_ns) { return std::to_string(at_ns) + "ns (" + short_duration(at_ns) + ")"; }

// The invariant that broke first (the earliest first violation; the world's order breaks a tie), or null.
const check::invariant_result* first_broken(const world::run_record& rec) {
  const check::invariant_result* first = nullptr;
  for (const auto& inv : rec.invariants) {
    if (inv.holds || !inv.first) continue;
    if (first == nullptr || inv.first->at_ns < first->first->at_ns) first = &inv;
  }
  return first;
}

junit_case run_case(const scenario::scenario& sc, const world::run_record& rec, const std::string& suite,
                    const std::string& replay) {
  junit_case k;
  k.classname = suite;
  k.name = rec.variant.empty() ? sc.name : rec.variant;
  const check::expectation expected = scenario::expectation_for(sc, rec.variant);
  const std::string got = rec.verdict();
  const bool met = as_expected(sc, rec);
  const check::invariant_result* first = first_broken(rec);

  std::string facts = "expected: " + expectation_text(expected) + "\ngot: " + got + "\n";
  if (first != nullptr) {
    facts += "first violation: " + first->name + " at " + at_text(first->first->at_ns) + ": " + first->first->detail + "\n";
    if (!first->causes.empty())
      facts += "cause: " + first->causes.front().kind + ": " + first->causes.front().example + "\n";
  }
  if (rec.inconclusive) facts += "inconclusive: " + rec.inconclusive->kind + ": " + rec.inconclusive->detail + "\n";
  facts += "replay: " + replay + "\n";

  if (met) {
    k.result = junit_case::outcome::passed;
    k.system_out = facts + "as expected\n";
    return k;
  }
  k.text = facts;
  if (got == "inconclusive") {
    ADMIT_ASSERT(rec.inconclusive.has_value(), "an inconclusive verdict has its reason");
    ADMIT_ASSERT(first == nullptr, "an inconclusive verdict broke no invariant");
    // It could not finish and saw no violation: it judged nothing it did not reach, so no verdict at all.
    k.result = junit_case::outcome::error;
    k.message = "inconclusive (" + rec.inconclusive->kind + "): " + rec.inconclusive->detail;
  } else {
    k.result = junit_case::outcome::failure;
    k.message = "expected " + expectation_text(expected) + ", got " + got;
    if (first != nullptr)
      k.message += ": " + first->name + " broke at " + short_duration(first->first->at_ns) + ": " + first->first->detail;
  }
  return k;
}

std::string break_text(const std::string& what, const explore_junit_break& b) {
  std::string o = what + ": seed " + std::to_string(b.seed) + ", " + b.invariant + " at " + at_text(b.at_ns) + ": " +
                  b.detail + "\n";
  if (b.cause) o += "cause: " + *b.cause + "\n";
  o += "replay: " + b.replay + "\n";
  if (b.explored_scenario) o += "replay the seed's scenario: admitsim run " + shell_quote(*b.explored_scenario) + "\n";
  if (b.minimal_scenario) o += "minimal scenario: admitsim run " + shell_quote(*b.minimal_scenario) + "\n";
  if (b.confirmation) o += "on a real redis-server: " + *b.confirmation + "\n";
  return o;
}

junit_case explore_case(const explore_junit_input& in, const explore_junit_variant& v) {
  junit_case k;
  k.classname = in.name;
  k.name = v.variant.empty() ? in.name : v.variant;
  std::string facts = "expected: " + v.expected + "\nseeds: " + std::to_string(in.seeds_ran) + " (" + in.seeds + ")\n";
  if (v.counterexample)
    facts += break_text("first counterexample (" + std::to_string(v.counterexample_seeds) + " seeds)", *v.counterexample);
  if (v.expected_shown) facts += break_text("expected violation shown first", *v.expected_shown);
  if (v.expects_violation && !v.expected_shown) facts += "no seed showed the expected violation\n";
  if (v.ev) facts += "evidence: " + v.ev->statement() + "\nfaults injected: " + v.ev->faults_text() + "\n";
  std::vector<std::string> errors = in.search_errors;
  if (v.inconclusive_seeds != 0)
    errors.push_back(std::to_string(v.inconclusive_seeds) + " seeds could not finish (inconclusive); the first: " +
                     v.first_inconclusive.value_or("?"));
  for (const auto& f : v.shrink_failures) errors.push_back(f);
  for (const auto& e : errors) facts += "could not conclude: " + e + "\n";

  if (v.counterexample) {
    ADMIT_ASSERT(v.counterexample_seeds != 0, "a counterexample was counted");
    const explore_junit_break& b = *v.counterexample;
    k.result = junit_case::outcome::failure;
    k.message = "counterexample: seed " + std::to_string(b.seed) + ", " + b.invariant + " broke at " +
                short_duration(b.at_ns) + ": " + b.detail;
    k.text = facts;
  } else if (!errors.empty()) {
    k.result = junit_case::outcome::error;
    k.message = errors.front();
    k.text = facts;
  } else if (v.expects_violation && !v.expected_shown) {
    k.result = junit_case::outcome::failure;
    k.message = "expected " + v.expected + ", but no seed of " + std::to_string(in.seeds_ran) + " showed it";
    k.text = facts;
  } else {
    k.result = junit_case::outcome::passed;
    k.system_out = facts + "as expected\n";
  }
  return k;
}

}  // namespace

junit_suite run_junit_suite(const scenario::scenario& sc, const std::vector<world::run_record>& runs,
                            const std::string& replay) {
  junit_suite s;
  s.name = sc.name;
  for (const auto& rec : runs) s.cases.push_back(run_case(sc, rec, s.name, replay));
  return s;
}

std::string render_run_junit(const std::vector<junit_suite>& suites) { return render_junit("admitsim run", suites); }

std::string render_explore_junit(const explore_junit_input& in) {
  junit_suite s;
  s.name = in.name;
  for (const auto& v : in.variants) s.cases.push_back(explore_case(in, v));
  return render_junit("admitsim explore", {s});
}

}  // namespace admit::reports
