// Helpers shared by the gate/redis unit tests: a fixed server clock, argv
// building, and a RapidCheck runner with a printed, reproducible seed.
#pragma once

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gate/redis/replica.hpp"
#include "tests/common/rapidcheck_support.hpp"

namespace admit::redis::test {

// A server clock reading: 2023-11-14T22:13:20Z, in microseconds.
inline constexpr std::int64_t t0_us = 1'700'000'000'000'000;
inline constexpr std::int64_t t0_ms = t0_us / 1000;
inline constexpr std::int64_t us_per_ms = 1000;

inline std::int64_t at_ms(std::int64_t ms_after_t0) { return t0_us + ms_after_t0 * us_per_ms; }

inline reply run(replica& r, std::initializer_list<std::string> argv, std::int64_t now_us = t0_us) {
  const std::vector<std::string> args(argv);
  return r.execute(args, now_us);
}

inline reply integer(std::int64_t v) { return reply::from_integer(v); }

inline reply bulks(std::initializer_list<std::string> items) {
  std::vector<reply> out;
  for (const auto& s : items) out.push_back(reply::bulk(s));
  return reply::array(std::move(out));
}

// A uniform draw from [min, max_exclusive). RapidCheck's own inRange scales
// its range with the case's size (small values first); choices that pick an
// action, a limit or a key should cover their whole range in every case, so
// they are drawn at full size. They still shrink towards `min`.
template <typename T>
T uniform_in(T min, T max_exclusive) {
  return *rc::gen::resize(100, rc::gen::inRange<T>(min, max_exclusive));
}

// A uniform pick from `options` (shrinks towards the first).
template <typename T>
T pick(const std::vector<T>& options) {
  return *rc::gen::resize(100, rc::gen::elementOf(options));
}

// The seed for every property in a run: ADMITSIM_RC_SEED if set, else fixed,
// so a test run is deterministic and a failure can be replayed.
inline std::uint64_t property_seed() {
  if (const char* env = std::getenv("ADMITSIM_RC_SEED")) return std::strtoull(env, nullptr, 10);
  return 20240601;
}

// RapidCheck prints "Using configuration: seed=<random>" when it loads its
// configuration, a seed these tests never use. Pin it to ours (unless the
// caller set RC_PARAMS) so the one seed printed is the one that replays.
inline const bool rc_params_pinned = [] {
  if (std::getenv("RC_PARAMS") == nullptr) {
    const std::string params = "seed=" + std::to_string(property_seed());
    setenv("RC_PARAMS", params.c_str(), 0);
  }
  return true;
}();

// The budget of an agreement property: `cases`, or ADMITSIM_AGREEMENT_CASES
// when it is set to a positive count (the sanitizer stage of scripts/test.sh
// runs fewer cases: what it looks for is memory errors on the same paths).
inline int agreement_cases(int cases) {
  if (const char* env = std::getenv("ADMITSIM_AGREEMENT_CASES")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return cases;
}

// Runs a RapidCheck property with an explicit seed and budget and returns its
// result, for tests that expect a failure as well as for those that expect a
// pass.
template <typename Testable>
rc::detail::TestResult check_property(const std::string& name, Testable&& testable,
                                      int max_success = 100, int max_size = 100) {
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  metadata.description = name;
  rc::detail::TestParams params;
  params.seed = property_seed();
  params.maxSuccess = max_success;
  params.maxSize = max_size;
  // A listener of our own instead of RapidCheck's global one: the seed above
  // replays a failure, and the guards' expected failures must not print
  // RapidCheck's "had failures" banner at exit.
  admit::test::quiet_listener listener;
  return rc::detail::checkProperty(rc::detail::toProperty(std::forward<Testable>(testable)),
                                   metadata, params, listener);
}

// RapidCheck's account of a result, with the seed and the command replaying it.
inline std::string describe(const rc::detail::TestResult& result,
                            std::string_view binary = "build/tests/redis/redis_unit_tests") {
  std::ostringstream out;
  rc::detail::printResultMessage(result, out);
  out << "\nseed " << property_seed() << "; replay with ADMITSIM_RC_SEED=" << property_seed()
      << " " << binary;
  return out.str();
}

inline bool passed(const rc::detail::TestResult& result) {
  return result.template is<rc::detail::SuccessResult>();
}

inline bool failed(const rc::detail::TestResult& result) {
  return result.template is<rc::detail::FailureResult>();
}

}  // namespace admit::redis::test
