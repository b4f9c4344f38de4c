// ADMIT_ASSERT: an assertion that stays on in every build, NDEBUG or not.
//
// The gates and the simulator check their own invariants as they run; a
// broken invariant is a bug in admitsim or in a gate under test, and it must
// never be compiled away in the release build that the benchmarks measure.
// A failed assertion throws admit::assertion_failure (so a test can expect it
// and the CLI can report it with the seed) rather than aborting.
#pragma once

#include <stdexcept>
#include <string>

namespace admit {

class assertion_failure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void assertion_failed(const char* expr, const char* why, const char* file,
                                         int line) {
  throw assertion_failure(std::string(file) + ":" + std::to_string(line) + ": assertion `" + expr +
                          "` failed: " + why);
}

}  // namespace admit

#define ADMIT_ASSERT(cond, why)                                          \
  do {                                                                   \
    if (!(cond)) [[unlikely]]                                            \
      ::admit::assertion_failed(#cond, (why), __FILE__, __LINE__);       \
  } while (0)
