#include "sim/kernel/prng.hpp"

#include <random>

namespace admit::sim {

// The standard algorithms that take a generator (std::ranges::sample and
// the like) accept a prng.
static_assert(std::uniform_random_bit_generator<prng>);

prng::prng(std::uint64_t seed) noexcept {
  std::uint64_t state = seed;
  for (auto& word : s_) word = splitmix64_next(state);
  // No all-zero state: splitmix64_mix is a bijection and its four inputs
  // differ, so at most one of the four words is zero.
}

prng prng::from_state(const std::array<std::uint64_t, 4>& state) {
  const bool all_zero = state[0] == 0 && state[1] == 0 && state[2] == 0 && state[3] == 0;
  ADMIT_ASSERT(!all_zero, "xoshiro256** has no all-zero state: it would only produce zeros");
  prng generator;
  generator.s_ = state;
  return generator;
}

prng substream(std::uint64_t run_seed, std::uint64_t stream_id) noexcept {
  const std::uint64_t run_word = splitmix64_mix(run_seed + splitmix64_gamma);
  return prng(splitmix64_mix(run_word ^ stream_id));
}

}  // namespace admit::sim
