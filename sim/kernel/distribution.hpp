// Duration distributions: latencies, think times, fault gaps, as integer
// nanoseconds drawn from a prng.
//
// Model. Each function turns a few draws from a prng into one duration in
// [0, duration_cap_ns]. The formulas are fixed here and pinned by golden
// tests, because they are part of what a seed means:
//   exponential  -mean * log(1 - u)                    (inversion)
//   lognormal    median * exp(sigma * z)               (z standard normal)
//   pareto       scale * exp(-log(1 - u) / alpha)      (inversion of the
//                                                       Pareto type I tail)
//   uniform      integers lo..hi, both inclusive
// with u = prng::uniform_01() and z from the Marsaglia polar method.
//
// Why the numbers are portable. The doubles come from exact operations
// (uniform_01's scaling, 1 - u, integer-to-double of values below 2^53),
// IEEE 754 basic operations (+ - * / sqrt, correctly rounded on every
// conforming platform), std::round (exact), and glibc's log and exp. g++ and
// clang++ call the same glibc libm on this platform, the build passes
// -ffp-contract=off -fno-fast-math (no fused multiply-add, no reassociation;
// never build this with -ffast-math), and x86-64 evaluates doubles in SSE2
// registers (no x87 extended precision). The remaining assumption: log and
// exp are not correctly rounded, so another libm (musl, macOS, a future
// glibc that changes its algorithms) may differ in the last bit of a
// double, and on rare draws that moves a rounded result by 1 ns. Golden
// tests catch such a platform at once.
//
// Rounding rule (round_ns): nearest integer, ties away from zero
// (std::round), then clamped to [0, duration_cap_ns]. A NaN is a bug and
// fails an assertion.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/kernel/prng.hpp"

namespace admit::sim {

// The longest duration any distribution returns: 10^15 ns, about 11.6 days,
// far beyond any run, and small enough that adding a few of them to a
// virtual time (int64 ns, about 292 years) cannot overflow. Heavy tails
// (pareto with a small alpha, lognormal with a large sigma) reach it.
inline constexpr std::int64_t duration_cap_ns = 1'000'000'000'000'000;

// A double of nanoseconds as an integer duration, by the rule above:
// nearest, ties away from zero, clamped to [0, duration_cap_ns]. Negative
// values and -0.0 give 0; +inf gives the cap.
std::int64_t round_ns(double ns);

// A standard normal value (mean 0, variance 1) by the Marsaglia polar
// method: u, v uniform in (-1, 1) until 0 < s = u^2 + v^2 < 1, then
// u * sqrt(-2 log(s) / s). The second value the method yields (v * ...) is
// dropped, so a draw depends only on the stream position and nothing is
// cached between calls. Takes 2 uniform_01 draws per attempt, on average
// 4/pi attempts.
double standard_normal(prng& rng);

// Exponential with the given mean in [0, duration_cap_ns]; one draw.
std::int64_t exponential_ns(prng& rng, std::int64_t mean_ns);

// Lognormal with the given median in [0, duration_cap_ns] and the standard
// deviation sigma >= 0 (finite) of its logarithm; draws as standard_normal.
std::int64_t lognormal_ns(prng& rng, std::int64_t median_ns, double sigma);

// Pareto type I: at least scale_ns (in [0, duration_cap_ns]), tail index
// alpha > 0 (finite); the mean is finite only for alpha > 1. One draw.
std::int64_t pareto_ns(prng& rng, std::int64_t scale_ns, double alpha);

// Uniform integer in [lo_ns, hi_ns], 0 <= lo_ns <= hi_ns <= duration_cap_ns.
std::int64_t uniform_ns(prng& rng, std::int64_t lo_ns, std::int64_t hi_ns);

enum class duration_kind : std::uint8_t { fixed, uniform, exponential, lognormal, pareto };

// "fixed", "uniform", "exponential", "lognormal", "pareto".
std::string_view duration_kind_name(duration_kind kind) noexcept;
// The inverse of duration_kind_name; nullopt for any other name.
std::optional<duration_kind> parse_duration_kind(std::string_view name) noexcept;

// A duration distribution as data, as a scenario file describes it. Which
// fields count depends on the kind:
//   kind         value_ns          hi_ns            sigma  alpha
//   fixed        the value         -                -      -
//   uniform      lower bound       upper bound      -      -
//   exponential  mean              -                -      -
//   lognormal    median            -                sigma  -
//   pareto       scale (minimum)   -                -      alpha
// Fields a kind does not use must stay zero, so that equal distributions
// compare equal. The factories check their arguments; a loader that fills
// the fields itself calls invalid_reason() to report a bad one.
struct duration_dist {
  duration_kind kind = duration_kind::fixed;
  std::int64_t value_ns = 0;
  std::int64_t hi_ns = 0;
  double sigma = 0.0;
  double alpha = 0.0;

  static duration_dist fixed(std::int64_t value_ns);
  static duration_dist uniform(std::int64_t lo_ns, std::int64_t hi_ns);
  static duration_dist exponential(std::int64_t mean_ns);
  static duration_dist lognormal(std::int64_t median_ns, double sigma);
  static duration_dist pareto(std::int64_t scale_ns, double alpha);

  // Why the fields do not make a valid distribution, or nullptr if they do.
  const char* invalid_reason() const noexcept;

  // One duration in [0, duration_cap_ns]. A fixed distribution draws
  // nothing; the others draw as the functions above.
  std::int64_t sample(prng& rng) const;

  // The distribution's mean, rounded by round_ns, for documentation and
  // reports; it ignores the cap. Pareto with alpha <= 1 has no finite mean
  // and reports duration_cap_ns.
  std::int64_t mean_ns() const;

  friend bool operator==(const duration_dist&, const duration_dist&) = default;
};

}  // namespace admit::sim
