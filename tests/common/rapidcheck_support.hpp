// What the project's RapidCheck properties share: the fixed seed and budget
// they run with, the quiet listener for a broken variant that is meant to
// fail, and RapidCheck's own account of a result.
//
// The seed is fixed so that a run is deterministic; RC_PARAMS="seed=..."
// (RapidCheck's own variable) replays another one. ADMITSIM_PROPERTY_CASES
// raises the budget of a property that scales with it (the ctest label
// property-long sets it).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

namespace admit::test {

enum class budget : std::uint8_t {
  fixed,     // max_success as given
  scalable,  // ADMITSIM_PROPERTY_CASES, when set to a positive count, replaces it
};

inline rc::detail::TestParams property_params(std::uint64_t seed, int max_success, int max_size,
                                              budget b = budget::scalable) {
  if (const char* env = std::getenv("ADMITSIM_PROPERTY_CASES"); b == budget::scalable && env != nullptr) {
    const int n = std::atoi(env);
    if (n > 0) max_success = n;
  }
  rc::detail::TestParams params;
  if (std::getenv("RC_PARAMS") != nullptr) {
    params = rc::detail::configuration().testParams;
  } else {
    params.seed = seed;
  }
  params.maxSuccess = max_success;
  params.maxSize = max_size;
  return params;
}

// A broken variant is expected to fail: this listener keeps RapidCheck from
// reporting it again at exit as a failure to reproduce.
class quiet_listener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// Runs `property` under `params`, named `id`. `expect_failure` is for a
// deliberately broken variant: its failure is not reported at exit.
template <class Property>
rc::detail::TestResult check_property(const std::string& id, Property&& property,
                                      const rc::detail::TestParams& params, bool expect_failure = false) {
  rc::detail::TestMetadata metadata;
  metadata.id = id;
  metadata.description = id;
  if (!expect_failure) return rc::detail::checkTestable(std::forward<Property>(property), metadata, params);
  quiet_listener listener;
  return rc::detail::checkProperty(rc::detail::toProperty(std::forward<Property>(property)), metadata, params,
                                   listener);
}

inline std::string describe(const rc::detail::TestResult& result) {
  std::ostringstream out;
  rc::detail::printResultMessage(result, out);
  return out.str();
}

}  // namespace admit::test
