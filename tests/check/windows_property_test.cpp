// The monitor's violation windows against a model, as a RapidCheck property.
//
// Goal: for any sequence of a level's values over time, the monitor's exact
// totals (windows, time in violation), its worst moment and its bounded list
// of windows are what a direct computation over the sequence gives. Method:
// generated steps (a time gap, a value) against a generated bound, fed to
// check::monitor::level on a scheduler, compared with the model below. The
// property can fail: the same comparison against a model that takes a value
// at the bound for a violation (an off-by-one a monitor could have) must find
// a counterexample.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/check/monitor.hpp"
#include "sim/kernel/scheduler.hpp"
#include "tests/common/rapidcheck_support.hpp"

using namespace admit;

namespace {

constexpr std::array<const char*, 2> invariants = {"portal_inflight_le_cap", "liveness"};
constexpr std::uint8_t probes = admit::probe::in_fifo;

struct step {
  sim::vtime_ns gap = 0;  // after the previous step (0: the same instant)
  std::int64_t value = 0;
};

struct expected_windows {
  std::uint64_t windows = 0;
  sim::vtime_ns time_ns = 0;
  std::optional<std::pair<std::int64_t, sim::vtime_ns>> worst;  // value, first time reached
  std::vector<std::pair<sim::vtime_ns, sim::vtime_ns>> kept;     // start, end
};

// The model: a window opens when the value goes above the bound
// (`at_bound_violates`: at or above it, the broken model) and closes when it
// comes back; one still open ends at `end_ns`.
expected_windows model(const std::vector<step>& steps, std::int64_t bound, sim::vtime_ns end_ns,
                       bool at_bound_violates) {
  expected_windows out;
  sim::vtime_ns t = 0;
  // When the open window opened; -1 while none is open (virtual time starts at 0). A plain value:
  // g++ 12 at -O1 takes an std::optional here for one that may be read uninitialised.
  sim::vtime_ns open_at = -1;
  for (const step& s : steps) {
    t += s.gap;
    const bool over = at_bound_violates ? s.value >= bound : s.value > bound;
    if (over && open_at < 0) {
      open_at = t;
      ++out.windows;
      if (out.kept.size() < check::max_windows_kept) out.kept.emplace_back(t, t);
    }
    if (!over && open_at >= 0) {
      out.time_ns += t - open_at;
      if (out.windows <= check::max_windows_kept) out.kept.back().second = t;
      open_at = -1;
    }
    if (over && (!out.worst || s.value > out.worst->first)) out.worst = std::pair{s.value, t};
  }
  if (open_at >= 0) {
    out.time_ns += end_ns - open_at;
    if (out.windows <= check::max_windows_kept) out.kept.back().second = end_ns;
  }
  return out;
}

void check_windows(bool at_bound_violates) {
  const auto bound = *rc::gen::inRange<std::int64_t>(0, 6);
  const auto steps = *rc::gen::container<std::vector<step>>(rc::gen::build<step>(
      rc::gen::set(&step::gap, rc::gen::inRange<sim::vtime_ns>(0, 4)),
      rc::gen::set(&step::value, rc::gen::inRange<std::int64_t>(0, 10))));
  const auto tail = *rc::gen::inRange<sim::vtime_ns>(0, 4);

  sim::scheduler sched;
  check::monitor<int> mon(sched, invariants, {}, probes, 0);
  sim::vtime_ns t = 0;
  for (const step& s : steps) {
    t += s.gap;
    sched.schedule_at(t, [&mon, v = s.value, bound] {
      mon.level(0, v, bound, [v] { return "value " + std::to_string(v); });
    });
  }
  const sim::vtime_ns end_ns = t + tail;
  sched.schedule_at(end_ns, [] {});
  sched.run();
  mon.tear_down();
  const auto results = mon.take_invariants();
  const check::invariant_result& r = results[0];
  const expected_windows want = model(steps, bound, end_ns, at_bound_violates);

  RC_ASSERT(r.windows == want.windows);
  RC_ASSERT(r.time_in_violation_ns == want.time_ns);
  RC_ASSERT(r.holds == (want.windows == 0));
  RC_ASSERT(r.worst.has_value() == want.worst.has_value());
  if (want.worst) {
    RC_ASSERT(r.worst->value == want.worst->first);
    RC_ASSERT(r.worst->at_ns == want.worst->second);
    RC_ASSERT(r.worst->bound == bound);
    RC_ASSERT(r.first.has_value());
    RC_ASSERT(r.first->at_ns == want.kept.front().first);
  }
  RC_ASSERT(r.window_list.size() == want.kept.size());
  for (std::size_t i = 0; i < want.kept.size(); ++i) {
    RC_ASSERT(r.window_list[i].start_ns == want.kept[i].first);
    RC_ASSERT(r.window_list[i].end_ns == want.kept[i].second);
    RC_ASSERT(r.window_list[i].peak > bound);
  }
}

rc::detail::TestParams params_for(int max_success) {
  return admit::test::property_params(0x5EED'0000'0016ull, max_success, 200);  // 200 steps pass the bounded window list
}

rc::detail::TestResult run(bool at_bound_violates, const rc::detail::TestParams& params) {
  return admit::test::check_property(at_bound_violates ? "windows/broken-model" : "windows",
                              [at_bound_violates] { check_windows(at_bound_violates); }, params, at_bound_violates);
}

}  // namespace

TEST_CASE("a level's windows, time in violation and worst moment agree with the model", "[check][property]") {
  const auto params = params_for(500);
  const auto result = run(false, params);
  INFO("seed " << params.seed << "; replay with RC_PARAMS=\"seed=" << params.seed << "\"\n" << admit::test::describe(result));
  REQUIRE(result.is<rc::detail::SuccessResult>());
}

TEST_CASE("the windows property can fail: a model that counts a value at the bound as over it", "[check][property]") {
  const auto result = run(true, params_for(500));
  REQUIRE(result.is<rc::detail::FailureResult>());
}
