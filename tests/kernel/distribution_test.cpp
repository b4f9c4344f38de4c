// Tests for sim/kernel/distribution.hpp.
//
// The golden values come from an independent Python implementation of the
// header's formulas (same generator as in prng_test.cpp), run once on this
// platform; Python floats are IEEE doubles and math.log, math.exp and
// math.sqrt call the same glibc libm. Its core is:
//   u01()          = (next() >> 11) * 2.0**-53
//   exponential    = round_ns(-float(mean) * math.log(1.0 - u01()))
//   normal         = loop: u = 2.0*u01() - 1.0; v = 2.0*u01() - 1.0; s = u*u + v*v
//                    until s < 1.0 and s != 0.0; return u * math.sqrt(-2.0*math.log(s)/s)
//   lognormal      = round_ns(float(median) * math.exp(sigma * normal()))
//   pareto         = round_ns(float(scale) * math.exp(-math.log(1.0 - u01()) / alpha))
//   round_ns(x)    = 0 if not x > 0; cap if x >= cap; else floor(x) + (x - floor(x) >= 0.5)
// The integers must match exactly: a mismatch means a formula or libm changed.
#include "sim/kernel/distribution.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/vtime.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <utility>

namespace {

using admit::sim::duration_cap_ns;
using admit::sim::duration_dist;
using admit::sim::duration_kind;
using admit::sim::prng;

using admit::sim::ms;
constexpr int draws = 100'000;

// The sample mean of `draws` durations; each must lie in [0, cap]. The
// parameters used below keep the integer sum far from overflow.
template <class Draw>
double sample_mean(prng rng, Draw draw) {
  std::int64_t sum = 0;
  for (int i = 0; i < draws; ++i) {
    const std::int64_t ns = draw(rng);
    REQUIRE(ns >= 0);
    REQUIRE(ns <= duration_cap_ns);
    sum += ns;
  }
  return static_cast<double>(sum) / draws;
}

bool within(double value, double target, double relative_tolerance) {
  return std::abs(value - target) <= relative_tolerance * target;
}

}  // namespace

TEST_CASE("round_ns agrees with std::round below the cap") {
  // Goal: the rounding written without the library call is std::round's. Method: doubles of every
  // magnitude from 2^-10 to the cap, drawn from a fixed splitmix64 stream, each with its neighbours
  // and the halves around it.
  using admit::sim::round_ns;
  std::uint64_t state = 0x0DDBA11;
  int compared = 0;
  for (int i = 0; i < 200'000; ++i) {
    const std::uint64_t bits = admit::sim::splitmix64_next(state);
    const double mag = std::ldexp(1.0, static_cast<int>(bits % 60) - 10);  // 2^-10 .. 2^49
    const double x = mag * (1.0 + static_cast<double>(bits >> 11) * 0x1p-53);
    const double half = std::floor(x) + 0.5;
    for (const double v : {x, std::nextafter(x, 0.0), std::nextafter(x, 1e300), half, std::nextafter(half, 0.0),
                           std::nextafter(half, 1e300)}) {
      if (!(v > 0.0) || v >= static_cast<double>(duration_cap_ns)) continue;
      REQUIRE(round_ns(v) == static_cast<std::int64_t>(std::round(v)));
      ++compared;
    }
  }
  CHECK(compared > 1'000'000);
}

TEST_CASE("round_ns rounds to nearest, ties away from zero, and clamps") {
  // Goal: the documented double-to-integer rule. Method: ties, the largest
  // double below one half, negatives, infinities and the cap; NaN fails its
  // assertion.
  using admit::sim::round_ns;
  CHECK(round_ns(0.5) == 1);
  CHECK(round_ns(1.5) == 2);
  CHECK(round_ns(2.5) == 3);
  CHECK(round_ns(2.4999999999999996) == 2);
  CHECK(round_ns(0.49999999999999994) == 0);
  CHECK(round_ns(1234.0) == 1234);
  CHECK(round_ns(0.0) == 0);
  CHECK(round_ns(-0.0) == 0);
  CHECK(round_ns(-3.7) == 0);
  CHECK(round_ns(-std::numeric_limits<double>::infinity()) == 0);
  CHECK(round_ns(999'999'999'999'999.4) == 999'999'999'999'999);
  CHECK(round_ns(999'999'999'999'999.5) == duration_cap_ns);
  CHECK(round_ns(1e15) == duration_cap_ns);
  CHECK(round_ns(1e300) == duration_cap_ns);
  CHECK(round_ns(std::numeric_limits<double>::infinity()) == duration_cap_ns);
  CHECK_THROWS_AS(round_ns(std::numeric_limits<double>::quiet_NaN()), admit::assertion_failure);
}

TEST_CASE("standard_normal matches the polar-method reference exactly") {
  // Goal: the normal generator is the documented polar method. Method: the
  // first three doubles for seed 7, compared bit for bit.
  prng rng(7);
  CHECK(admit::sim::standard_normal(rng) == 0.9643618527255184);
  CHECK(admit::sim::standard_normal(rng) == -0.3039301238656567);
  CHECK(admit::sim::standard_normal(rng) == 0.30479435832638674);
}

TEST_CASE("the first samples of each distribution match the reference to the nanosecond") {
  // Goal: formulas, draw order and rounding are pinned. Method: the first
  // six samples for seed 7 of each distribution against the reference, and
  // the number of raw draws the six lognormal samples took (polar
  // rejections included).
  using admit::sim::exponential_ns;
  using admit::sim::lognormal_ns;
  using admit::sim::pareto_ns;
  using admit::sim::uniform_ns;
  using samples = std::array<std::int64_t, 6>;

  prng rng(7);
  samples exponential{};
  for (auto& ns : exponential) ns = exponential_ns(rng, 1 * ms);
  CHECK(exponential == samples{1205896, 326771, 1830256, 3968473, 4695125, 2061790});

  rng = prng(7);
  samples lognormal{};
  for (auto& ns : lognormal) ns = lognormal_ns(rng, 1 * ms, 0.5);
  CHECK(lognormal == samples{1619603, 859018, 1164623, 427197, 433838, 596486});
  prng raw(7);
  for (int i = 0; i < 22; ++i) raw.next_u64();
  CHECK(rng == raw);

  rng = prng(7);
  samples pareto{};
  for (auto& ns : pareto) ns = pareto_ns(rng, 1 * ms, 1.5);
  CHECK(pareto == samples{2234306, 1243397, 3387765, 14092583, 22875892, 3953204});

  rng = prng(7);
  samples uniform{};
  for (auto& ns : uniform) ns = uniform_ns(rng, 0, 2 * ms);
  CHECK(uniform == samples{1401153, 557502, 1679255, 1962196, 1981721, 1745548});
}

TEST_CASE("sample means over 100'000 draws are close to the distributions' means") {
  // Goal: each sampler has the right scale. Method: sample means for fixed
  // seeds, each tolerance about 4 standard errors; the same check rejects a
  // sampler 5% off (exponential with mean 1.05 ms against 1 ms).
  const double exp_mean =
      sample_mean(prng(101), [](prng& r) { return admit::sim::exponential_ns(r, 1 * ms); });
  CHECK(within(exp_mean, 1.0 * ms, 0.015));
  const double exp_off =
      sample_mean(prng(101), [](prng& r) { return admit::sim::exponential_ns(r, 1'050'000); });
  CHECK_FALSE(within(exp_off, 1.0 * ms, 0.015));

  // Mean of a lognormal: median * exp(sigma^2 / 2); relative sd 0.53.
  const double logn_mean =
      sample_mean(prng(102), [](prng& r) { return admit::sim::lognormal_ns(r, 1 * ms, 0.5); });
  CHECK(within(logn_mean, 1.0 * ms * std::exp(0.125), 0.01));

  // Pareto alpha 3: mean scale * 3/2, relative sd 0.58.
  const double pareto_mean =
      sample_mean(prng(103), [](prng& r) { return admit::sim::pareto_ns(r, 1 * ms, 3.0); });
  CHECK(within(pareto_mean, 1.5 * ms, 0.01));

  // Uniform 0..2 ms: mean 1 ms, relative sd 0.58.
  const double uniform_mean =
      sample_mean(prng(104), [](prng& r) { return admit::sim::uniform_ns(r, 0, 2 * ms); });
  CHECK(within(uniform_mean, 1.0 * ms, 0.01));

  prng rng(105);
  double sum = 0.0;
  double sum_squares = 0.0;
  for (int i = 0; i < draws; ++i) {
    const double z = admit::sim::standard_normal(rng);
    sum += z;
    sum_squares += z * z;
  }
  CHECK(std::abs(sum / draws) < 0.013);
  CHECK(std::abs(sum_squares / draws - 1.0) < 0.018);
}

TEST_CASE("degenerate parameters give exact values and still draw") {
  // Goal: the edges of each parameter. Method: mean, median or scale 0 gives
  // 0; sigma 0 gives the median; every call advances the stream as a call
  // with ordinary parameters would, so a parameter never shifts later draws.
  prng a(9);
  prng b(9);
  CHECK(admit::sim::exponential_ns(a, 0) == 0);
  admit::sim::exponential_ns(b, 5 * ms);
  CHECK(a == b);

  // With a huge sigma or a tiny alpha the factor overflows to infinity about
  // half the time; a zero median or scale must still give 0, never NaN.
  for (int i = 0; i < 16; ++i) {
    CHECK(admit::sim::lognormal_ns(a, 0, 1e300) == 0);
    admit::sim::lognormal_ns(b, 1 * ms, 1e300);
    CHECK(a == b);
    CHECK(admit::sim::pareto_ns(a, 0, 1e-300) == 0);
    admit::sim::pareto_ns(b, 1 * ms, 1e-300);
    CHECK(a == b);
  }

  CHECK(admit::sim::lognormal_ns(a, 3 * ms, 0.0) == 3 * ms);
  admit::sim::lognormal_ns(b, 1 * ms, 1.0);
  CHECK(a == b);

  CHECK(admit::sim::uniform_ns(a, 4, 4) == 4);
  CHECK(admit::sim::uniform_ns(a, duration_cap_ns, duration_cap_ns) == duration_cap_ns);
}

TEST_CASE("heavy tails stop at the cap and pareto never goes below its scale") {
  // Goal: no overflow from heavy tails. Method: pareto with alpha 0.01 and
  // lognormal with sigma 40 reach the cap exactly and never pass it; pareto
  // with alpha 1.5 stays at or above its scale.
  prng rng(12);
  int capped_pareto = 0;
  int capped_lognormal = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t p = admit::sim::pareto_ns(rng, 1 * ms, 0.01);
    REQUIRE(p >= 1 * ms);
    REQUIRE(p <= duration_cap_ns);
    capped_pareto += p == duration_cap_ns ? 1 : 0;
    const std::int64_t l = admit::sim::lognormal_ns(rng, 1 * ms, 40.0);
    REQUIRE(l >= 0);
    REQUIRE(l <= duration_cap_ns);
    capped_lognormal += l == duration_cap_ns ? 1 : 0;
    REQUIRE(admit::sim::pareto_ns(rng, 1 * ms, 1.5) >= 1 * ms);
  }
  CHECK(capped_pareto > 500);
  CHECK(capped_lognormal > 100);
}

TEST_CASE("out-of-range parameters fail their assertions") {
  // Goal: bad parameters are bugs caught at the call. Method: one call per
  // rule.
  prng rng(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(admit::sim::exponential_ns(rng, -1), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::exponential_ns(rng, duration_cap_ns + 1), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::lognormal_ns(rng, 1 * ms, -0.1), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::lognormal_ns(rng, 1 * ms, nan), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::lognormal_ns(rng, 1 * ms, inf), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::pareto_ns(rng, 1 * ms, 0.0), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::pareto_ns(rng, 1 * ms, nan), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::pareto_ns(rng, -1, 2.0), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::uniform_ns(rng, 5, 4), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::uniform_ns(rng, -1, 4), admit::assertion_failure);
  CHECK_THROWS_AS(admit::sim::uniform_ns(rng, 0, duration_cap_ns + 1), admit::assertion_failure);
}

TEST_CASE("duration_dist samples exactly as the function of its kind") {
  // Goal: the data form is the same sampler. Method: two generators with one
  // seed, one through duration_dist, one through the function; same values
  // and same stream position. A fixed distribution draws nothing.
  const std::array<std::pair<duration_dist, std::int64_t (*)(prng&)>, 4> cases = {{
      {duration_dist::uniform(2 * ms, 5 * ms),
       [](prng& r) { return admit::sim::uniform_ns(r, 2 * ms, 5 * ms); }},
      {duration_dist::exponential(3 * ms),
       [](prng& r) { return admit::sim::exponential_ns(r, 3 * ms); }},
      {duration_dist::lognormal(1 * ms, 0.7),
       [](prng& r) { return admit::sim::lognormal_ns(r, 1 * ms, 0.7); }},
      {duration_dist::pareto(1 * ms, 1.2),
       [](prng& r) { return admit::sim::pareto_ns(r, 1 * ms, 1.2); }},
  }};
  for (const auto& [dist, direct] : cases) {
    prng a(13);
    prng b(13);
    for (int i = 0; i < 100; ++i) REQUIRE(dist.sample(a) == direct(b));
    CHECK(a == b);
  }

  prng rng(13);
  const prng before = rng;
  CHECK(duration_dist::fixed(350 * ms).sample(rng) == 350 * ms);
  CHECK(rng == before);
}

TEST_CASE("duration_dist reports approximate means") {
  // Goal: the documented mean of each kind. Method: closed forms, rounded by
  // round_ns; pareto with alpha <= 1 reports the cap.
  CHECK(duration_dist::fixed(7).mean_ns() == 7);
  CHECK(duration_dist::uniform(2, 5).mean_ns() == 4);  // 3.5, ties away from zero
  CHECK(duration_dist::uniform(2, 6).mean_ns() == 4);
  CHECK(duration_dist::exponential(3 * ms).mean_ns() == 3 * ms);
  CHECK(duration_dist::lognormal(1 * ms, 0.5).mean_ns() == 1'133'148);  // 1e6 * e^0.125
  CHECK(duration_dist::lognormal(0, 50.0).mean_ns() == 0);
  CHECK(duration_dist::pareto(1 * ms, 3.0).mean_ns() == 1'500'000);
  CHECK(duration_dist::pareto(1 * ms, 1.0).mean_ns() == duration_cap_ns);
  CHECK(duration_dist::pareto(0, 0.5).mean_ns() == 0);
}

TEST_CASE("duration_dist explains invalid fields and its factories refuse them") {
  // Goal: a loader can report a bad distribution instead of crashing.
  // Method: invalid_reason on hand-filled structs; the factories assert.
  CHECK(duration_dist{}.invalid_reason() == nullptr);  // fixed 0 ns
  CHECK(duration_dist::pareto(1 * ms, 1.5).invalid_reason() == nullptr);

  duration_dist d;
  d.kind = duration_kind::uniform;
  d.value_ns = 5;
  d.hi_ns = 4;
  CHECK(std::string_view(d.invalid_reason()) == "uniform needs value_ns (lower bound) <= hi_ns");
  d.kind = duration_kind::exponential;
  CHECK(std::string_view(d.invalid_reason()) == "hi_ns is only for uniform and must stay 0");
  d.hi_ns = 0;
  d.value_ns = -1;
  CHECK(std::string_view(d.invalid_reason()) == "value_ns must be in [0, duration_cap_ns]");
  d.value_ns = 1;
  d.kind = duration_kind::lognormal;
  d.sigma = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::string_view(d.invalid_reason()) == "sigma must be finite and >= 0");
  d.sigma = 0.0;
  d.kind = duration_kind::pareto;
  CHECK(std::string_view(d.invalid_reason()) == "alpha must be finite and > 0");
  d.kind = static_cast<duration_kind>(99);
  CHECK(std::string_view(d.invalid_reason()) == "unknown kind");

  CHECK_THROWS_AS(duration_dist::fixed(-1), admit::assertion_failure);
  CHECK_THROWS_AS(duration_dist::uniform(3, 2), admit::assertion_failure);
  CHECK_THROWS_AS(duration_dist::exponential(duration_cap_ns + 1), admit::assertion_failure);
  CHECK_THROWS_AS(duration_dist::lognormal(1, -1.0), admit::assertion_failure);
  CHECK_THROWS_AS(duration_dist::pareto(1, 0.0), admit::assertion_failure);
  prng rng(1);
  CHECK_THROWS_AS(d.sample(rng), admit::assertion_failure);
}

TEST_CASE("duration kinds round-trip through their names") {
  // Goal: the names a scenario file uses. Method: every kind parses back
  // from its name; other names, including wrong case, do not parse.
  for (const auto kind : {duration_kind::fixed, duration_kind::uniform, duration_kind::exponential,
                          duration_kind::lognormal, duration_kind::pareto}) {
    CHECK(admit::sim::parse_duration_kind(admit::sim::duration_kind_name(kind)) == kind);
  }
  CHECK(admit::sim::duration_kind_name(duration_kind::lognormal) == "lognormal");
  CHECK_FALSE(admit::sim::parse_duration_kind("Pareto").has_value());
  CHECK_FALSE(admit::sim::parse_duration_kind("").has_value());
  CHECK(duration_dist::lognormal(5, 0.5) == duration_dist::lognormal(5, 0.5));
  CHECK_FALSE(duration_dist::lognormal(5, 0.5) == duration_dist::lognormal(5, 0.6));
}
