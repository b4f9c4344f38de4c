// prng: the simulator's one source of randomness.
//
// Model. A run has one 64-bit seed. Every actor, fault injector and
// distribution draws from its own sub-stream, derived from that seed and a
// stream id (`substream`), so adding draws to one actor never shifts the
// numbers another actor sees. A stream id is either a small integer or the
// FNV-1a hash of a name such as "faults", "arrivals" or "worker/3".
//
// Algorithms, all fixed here and pinned by golden tests (they are part of
// what a seed means, so changing any of them changes every replay):
//   - generator: xoshiro256** 1.0 (Blackman and Vigna, 2018);
//   - seeding: the four state words are the first four outputs of
//     splitmix64 (Steele, Lea and Flood; Vigna's splitmix64.c) started at
//     the seed. Four consecutive splitmix64 outputs are never all zero, so
//     the forbidden all-zero xoshiro state cannot arise;
//   - sub-streams: child_seed = mix64(mix64(run_seed + gamma) ^ stream_id),
//     then prng(child_seed). mix64 is splitmix64's output function and
//     mix64(run_seed + gamma) is splitmix64's first output for run_seed.
//     Both steps are bijections, so for one run seed, distinct stream ids
//     always give distinct child seeds (and, for one stream id, distinct run
//     seeds give distinct child seeds);
//   - bounded integers: Lemire's multiply-shift with rejection (unbiased);
//   - doubles in [0, 1): the top 53 bits times 2^-53.
// Everything is integer arithmetic except uniform_01's exact scaling, so the
// numbers are the same with every compiler and standard library.
// std::*_distribution and std::random_device are never used: their output is
// not specified across standard libraries.
//
// A prng is a small value (32 bytes). Copying it copies the stream: the copy
// replays the same numbers. To give an actor numbers of its own, derive a
// sub-stream instead of copying.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "gate/admit_assert.hpp"

namespace admit::sim {

// Added to the splitmix64 state at every step: 2^64 / golden ratio, odd.
inline constexpr std::uint64_t splitmix64_gamma = 0x9E3779B97F4A7C15;

// splitmix64's output function (a bijection on 64-bit words).
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
  return z ^ (z >> 31);
}

// One splitmix64 step: advances `state` and returns the next output.
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) noexcept {
  state += splitmix64_gamma;
  return splitmix64_mix(state);
}

class prng {
 public:
  // std::uniform_random_bit_generator, so the standard algorithms that only
  // need raw bits (never the distributions) can take a prng.
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
  result_type operator()() noexcept { return next_u64(); }

  // Seeds the four state words with splitmix64 started at `seed`.
  explicit prng(std::uint64_t seed) noexcept;

  // A generator with exactly this xoshiro256** state, for published test
  // vectors. The all-zero state is rejected: it would only produce zeros.
  static prng from_state(const std::array<std::uint64_t, 4>& state);

  // The stream id of a name: FNV-1a 64 over its bytes. "faults" and
  // "worker/3" are names; the hash is fixed, so ids are stable across runs.
  static constexpr std::uint64_t stream_id(std::string_view name) noexcept {
    std::uint64_t hash = 0xCBF29CE484222325;  // FNV-1a 64 offset basis
    for (const char c : name) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001B3;  // FNV-1a 64 prime
    }
    return hash;
  }

  // xoshiro256** 1.0: the next 64 raw bits.
  std::uint64_t next_u64() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound), unbiased; bound must be at least 1. Lemire's
  // multiply-shift: the high word of x * bound, redrawn while the low word
  // falls in the 2^64 mod bound values that would make some results more
  // likely. One draw unless rejected; a rejection has probability
  // (2^64 mod bound) / 2^64 < 1/2, so the loop limit is never reached by a
  // working generator.
  std::uint64_t uniform_u64(std::uint64_t bound) {
    ADMIT_ASSERT(bound > 0, "uniform_u64 needs a non-empty range [0, bound)");
    u128 product = static_cast<u128>(next_u64()) * bound;
    auto low = static_cast<std::uint64_t>(product);
    if (low < bound) [[unlikely]] {
      const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
      int redraws = 0;
      while (low < threshold) {
        ADMIT_ASSERT(redraws < redraws_max, "uniform_u64 rejected too often: broken generator");
        redraws += 1;
        product = static_cast<u128>(next_u64()) * bound;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::uint64_t>(product >> 64);
  }

  // Uniform in [lo, hi], both inclusive; lo <= hi. The full range
  // [INT64_MIN, INT64_MAX] takes one raw draw as is. The arithmetic is
  // unsigned (wrapping), so no range overflows.
  std::int64_t uniform_i64(std::int64_t lo, std::int64_t hi) {
    ADMIT_ASSERT(lo <= hi, "uniform_i64 needs lo <= hi");
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    if (span == std::numeric_limits<std::uint64_t>::max()) {
      return static_cast<std::int64_t>(next_u64());
    }
    // Conversion of a value above INT64_MAX wraps modulo 2^64 (C++20).
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + uniform_u64(span + 1));
  }

  // Uniform in [0, 1) on the grid k * 2^-53: the top 53 bits of one draw,
  // scaled exactly (no rounding happens).
  double uniform_01() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // True with probability ppm / 1'000'000; ppm <= 1'000'000. Integer only.
  // Always draws, even for 0 and 1'000'000, so that changing a probability
  // never shifts the numbers drawn after it.
  bool bernoulli_ppm(std::uint32_t ppm) {
    ADMIT_ASSERT(ppm <= ppm_one, "bernoulli_ppm takes parts per million, at most 1'000'000");
    return uniform_u64(ppm_one) < ppm;
  }

  // Fisher-Yates, from the back: swaps item i with a uniform j in [0, i].
  // Takes std::span{container}; n - 1 calls of uniform_u64 for n items.
  template <class T, std::size_t Extent>
  void shuffle(std::span<T, Extent> items) {
    for (std::size_t i = items.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(uniform_u64(i));
      using std::swap;
      swap(items[i - 1], items[j]);
    }
  }

  // Same state, same future numbers.
  friend bool operator==(const prng&, const prng&) = default;

 private:
  // unsigned __int128 is a GCC/Clang extension; __extension__ keeps
  // -Wpedantic quiet about it. Both compilers targeted here have it.
  __extension__ typedef unsigned __int128 u128;

  static constexpr std::uint32_t ppm_one = 1'000'000;
  // 2^-64 odds of reaching it with a working generator.
  static constexpr int redraws_max = 64;

  prng() = default;

  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }

  std::array<std::uint64_t, 4> s_{};
};

// The sub-stream `stream_id` of the run seeded with `run_seed`; the rule is in
// the header comment above. Deterministic: same arguments, same numbers.
prng substream(std::uint64_t run_seed, std::uint64_t stream_id) noexcept;

// Shorthand for substream(run_seed, prng::stream_id(name)).
inline prng substream(std::uint64_t run_seed, std::string_view name) noexcept {
  return substream(run_seed, prng::stream_id(name));
}

}  // namespace admit::sim
