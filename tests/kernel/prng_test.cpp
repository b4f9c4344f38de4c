// Tests for sim/kernel/prng.hpp.
//
// The golden values come from an independent Python implementation written
// from the published descriptions (Vigna's splitmix64.c and
// xoshiro256starstar.c, FNV-1a, Lemire's bounded integers), run once on
// Python integers masked to 64 bits; its core is:
//   mix64(z): z = (z ^ z>>30) * 0xBF58476D1CE4E5B9; z = (z ^ z>>27) * 0x94D049BB133111EB;
//             return z ^ z>>31
//   splitmix: s += 0x9E3779B97F4A7C15; return mix64(s)
//   xoshiro:  r = rotl(s1 * 5, 7) * 9; t = s1 << 17; s2 ^= s0; s3 ^= s1; s1 ^= s2;
//             s0 ^= s3; s2 ^= t; s3 = rotl(s3, 45); return r
//   lemire:   m = x * b; while (m mod 2^64) < (2^64 mod b): m = next() * b; return m >> 64
//   substream(seed, id) = xoshiro seeded with mix64(mix64(seed + gamma) ^ id)
// Independent of that, the xoshiro256** outputs for state {1, 2, 3, 4} are
// the published reference vector, and 0xE220A8397B1DCDAF is splitmix64's
// well-known first output for seed 0.
#include "sim/kernel/prng.hpp"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using admit::sim::prng;

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();

template <std::size_t N>
std::array<std::uint64_t, N> first_outputs(prng rng) {
  std::array<std::uint64_t, N> out{};
  for (auto& x : out) x = rng.next_u64();
  return out;
}

// How many raw draws separate `before` from `after` (at most limit; -1 if
// `after` is not reached).
int draws_between(prng before, const prng& after, int limit) {
  for (int n = 0; n <= limit; ++n) {
    if (before == after) return n;
    before.next_u64();
  }
  return -1;
}

// Pearson's statistic of observed counts against equal expected counts.
template <std::size_t N>
double chi_square(const std::array<int, N>& counts, double expected) {
  double sum = 0.0;
  for (const int c : counts) sum += (c - expected) * (c - expected) / expected;
  return sum;
}

// 5 degrees of freedom, p = 0.001.
constexpr double chi_square_5_critical = 20.515;

}  // namespace

TEST_CASE("splitmix64 outputs match the reference for seeds 0 and 1234567") {
  // Goal: the seeding generator is splitmix64 exactly. Method: golden outputs.
  std::uint64_t state = 0;
  const std::array<std::uint64_t, 5> seed_0 = {0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
                                               0x06C45D188009454F, 0xF88BB8A8724C81EC,
                                               0x1B39896A51A8749B};
  for (const auto expected : seed_0) CHECK(admit::sim::splitmix64_next(state) == expected);

  state = 1234567;
  const std::array<std::uint64_t, 5> seed_1234567 = {0x599ED017FB08FC85, 0x2C73F08458540FA5,
                                                     0x883EBCE5A3F27C77, 0x3FBEF740E9177B3F,
                                                     0xE3B8346708CB5ECD};
  for (const auto expected : seed_1234567) CHECK(admit::sim::splitmix64_next(state) == expected);

  static_assert(admit::sim::splitmix64_mix(admit::sim::splitmix64_gamma) == 0xE220A8397B1DCDAF);
}

TEST_CASE("xoshiro256** reproduces the published vector for state {1, 2, 3, 4}") {
  // Goal: the generator is xoshiro256** 1.0. Method: the reference
  // implementation's first ten outputs from state {1, 2, 3, 4}.
  const std::array<std::uint64_t, 10> expected = {11520u,
                                                  0u,
                                                  1509978240u,
                                                  1215971899390074240u,
                                                  1216172134540287360u,
                                                  607988272756665600u,
                                                  16172922978634559625u,
                                                  8476171486693032832u,
                                                  10595114339597558777u,
                                                  2904607092377533576u};
  CHECK(first_outputs<10>(prng::from_state({1, 2, 3, 4})) == expected);
}

TEST_CASE("a seed fills the state with splitmix64's first four outputs") {
  // Goal: the seeding rule. Method: compare with a generator built from the
  // splitmix64 outputs of seed 0 (listed above) as its state.
  CHECK(prng(0) == prng::from_state({0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
                                     0xF88BB8A8724C81EC}));
  CHECK(prng(42) == prng::from_state({0xBDD732262FEB6E95, 0x28EFE333B266F103, 0x47526757130F9F52,
                                      0x581CE1FF0E4AE394}));
  CHECK_FALSE(prng(0) == prng(1));
}

TEST_CASE("xoshiro256** seeded by splitmix64 matches the reference for seeds 0, 1 and 42") {
  // Goal: the seeded streams users get. Method: the first 8 outputs against
  // the Python reference.
  CHECK(first_outputs<8>(prng(0)) ==
        std::array<std::uint64_t, 8>{0x99EC5F36CB75F2B4, 0xBF6E1F784956452A, 0x1A5F849D4933E6E0,
                                     0x6AA594F1262D2D2C, 0xBBA5AD4A1F842E59, 0xFFEF8375D9EBCACA,
                                     0x6C160DEED2F54C98, 0x8920AD648FC30A3F});
  CHECK(first_outputs<8>(prng(1)) ==
        std::array<std::uint64_t, 8>{0xB3F2AF6D0FC710C5, 0x853B559647364CEA, 0x92F89756082A4514,
                                     0x642E1C7BC266A3A7, 0xB27A48E29A233673, 0x24C123126FFDA722,
                                     0x123004EF8DF510E6, 0x61954DCC47B1E89D});
  CHECK(first_outputs<8>(prng(42)) ==
        std::array<std::uint64_t, 8>{0x15780B2E0C2EC716, 0x6104D9866D113A7E, 0xAE17533239E499A1,
                                     0xECB8AD4703B360A1, 0xFDE6DC7FE2EC5E64, 0xC50DA53101795238,
                                     0xB82154855A65DDB2, 0xD99A2743EBE60087});
}

TEST_CASE("from_state rejects the all-zero state") {
  // Goal: the one degenerate xoshiro state cannot be built. Method: expect
  // the assertion; a single non-zero word is accepted.
  CHECK_THROWS_AS(prng::from_state({0, 0, 0, 0}), admit::assertion_failure);
  CHECK_NOTHROW(prng::from_state({0, 0, 0, 1}));
}

TEST_CASE("prng is a uniform random bit generator over the full 64-bit range") {
  // Goal: standard algorithms can take a prng. Method: the concept, and
  // operator() draws the same numbers as next_u64.
  static_assert(std::uniform_random_bit_generator<prng>);
  static_assert(prng::min() == 0);
  static_assert(prng::max() == u64_max);
  prng a(9);
  prng b(9);
  for (int i = 0; i < 4; ++i) CHECK(a() == b.next_u64());
}

TEST_CASE("stream_id is FNV-1a 64 of the name") {
  // Goal: stable stream names. Method: the FNV test vectors for "", "a" and
  // "foobar", then the reference's values for names the simulator uses.
  static_assert(prng::stream_id("") == 0xCBF29CE484222325);
  CHECK(prng::stream_id("a") == 0xAF63DC4C8601EC8C);
  CHECK(prng::stream_id("foobar") == 0x85944171F73967E8);
  CHECK(prng::stream_id("faults") == 0x8F7D6133A7F61844);
  CHECK(prng::stream_id("arrivals") == 0xB10BC22CA203CC53);
  CHECK(prng::stream_id("worker/3") == 0x248AB4C5902295C1);
}

TEST_CASE("substreams follow the documented rule and are deterministic") {
  // Goal: pin the derivation rule. Method: first outputs of four sub-streams
  // of run seed 42 against the reference, then derive each twice.
  using admit::sim::substream;
  CHECK(first_outputs<4>(substream(42, 0)) ==
        std::array<std::uint64_t, 4>{0x4FA257184348BB94, 0x7C2C9A11C6AF5CF1, 0x74A4342D6693DD9D,
                                     0x24AA4E0A755D6680});
  CHECK(first_outputs<4>(substream(42, 1)) ==
        std::array<std::uint64_t, 4>{0x3E3C1834FD991EB7, 0xE0422AC6076E91F5, 0xB70B42A6A795A9D2,
                                     0x4C65C02C5F85AB60});
  CHECK(first_outputs<4>(substream(42, "arrivals")) ==
        std::array<std::uint64_t, 4>{0xDE508DA48611B581, 0x0302F94690190DF4, 0xD45A7316AB1EAF84,
                                     0x3DFDE754F168914D});
  CHECK(first_outputs<4>(substream(42, "worker/3")) ==
        std::array<std::uint64_t, 4>{0xD3F93433AEF21D56, 0xCBB5120A60BCA76E, 0x933BF8D1DDF3EDA5,
                                     0x94F3BBC76503DCE5});

  CHECK(substream(42, "faults") == substream(42, "faults"));
  CHECK(substream(42, "faults") == substream(42, prng::stream_id("faults")));
}

TEST_CASE("substreams differ from each other and from the run's own stream") {
  // Goal: actors get unrelated numbers. Method: 64 ids (names and small
  // integers) under two run seeds; no two first outputs coincide, and none
  // equals the first output of prng(run_seed).
  using admit::sim::substream;
  std::vector<std::uint64_t> firsts;
  for (const std::uint64_t run_seed : {std::uint64_t{42}, std::uint64_t{43}}) {
    firsts.push_back(prng(run_seed).next_u64());
    for (std::uint64_t id = 0; id < 16; ++id) firsts.push_back(substream(run_seed, id).next_u64());
    for (int worker = 0; worker < 16; ++worker) {
      firsts.push_back(substream(run_seed, "worker/" + std::to_string(worker)).next_u64());
    }
  }
  std::sort(firsts.begin(), firsts.end());
  CHECK(std::adjacent_find(firsts.begin(), firsts.end()) == firsts.end());
  CHECK(firsts.size() == 66);
}

TEST_CASE("uniform_u64 with bound 1 returns 0 and takes one draw") {
  // Goal: the smallest range. Method: 100 calls, each compared with a copy
  // advanced by one raw draw.
  prng rng(5);
  for (int i = 0; i < 100; ++i) {
    prng before = rng;
    CHECK(rng.uniform_u64(1) == 0);
    CHECK(draws_between(before, rng, 4) == 1);
  }
}

TEST_CASE("uniform_u64 with bound 2^63 + 1 rejects and matches the reference") {
  // Goal: the rejection step is Lemire's, exactly. Method: with this bound
  // about half of the raw draws are rejected; the values and the number of
  // raw draws consumed match the reference.
  const std::uint64_t bound = (std::uint64_t{1} << 63) + 1;
  prng rng(42);
  const prng start = rng;
  std::array<std::uint64_t, 6> values{};
  for (auto& v : values) v = rng.uniform_u64(bound);
  CHECK(values == std::array<std::uint64_t, 6>{0x7EF36E3FF1762F32, 0x6286D29880BCA91C,
                                               0x5C10AA42AD32EED9, 0x6174B739374BB23F,
                                               0x2534EDCC39D7C4B2, 0x6687F6D49803635B});
  CHECK(draws_between(start, rng, 100) == 13);

  rng = start;
  for (int i = 0; i < 1000; ++i) REQUIRE(rng.uniform_u64(bound) < bound);
  CHECK(draws_between(start, rng, 5000) == 2032);
}

TEST_CASE("uniform_u64 stays below the largest bound and refuses bound 0") {
  // Goal: the extremes of the bound. Method: 1000 draws below 2^64 - 1; an
  // empty range fails its assertion.
  prng rng(3);
  for (int i = 0; i < 1000; ++i) REQUIRE(rng.uniform_u64(u64_max) < u64_max);
  CHECK_THROWS_AS(rng.uniform_u64(0), admit::assertion_failure);
}

TEST_CASE("uniform_u64 over 6 buckets passes a chi-square check") {
  // Goal: no gross bias on a small range. Method: 60'000 draws with a fixed
  // seed; Pearson's statistic below the p = 0.001 critical value and every
  // bucket within 4% of 10'000. A biased variant (top 3 bits mod 6) run
  // through the same check must fail it, so the check can fail.
  constexpr int draws = 60'000;
  constexpr double expected = draws / 6.0;
  prng rng(2024);
  std::array<int, 6> counts{};
  for (int i = 0; i < draws; ++i) counts[rng.uniform_u64(6)] += 1;
  CHECK(chi_square(counts, expected) < chi_square_5_critical);
  for (const int c : counts) CHECK(std::abs(c - expected) < 0.04 * expected);

  std::array<int, 6> biased{};
  for (int i = 0; i < draws; ++i) biased[(rng.next_u64() >> 61) % 6] += 1;
  CHECK(chi_square(biased, expected) > chi_square_5_critical);
}

TEST_CASE("uniform_u64 shows no modulo bias on a bound near 2^64") {
  // Goal: results are not reduced modulo the bound. Method: with bound
  // 3 * 2^62, plain `x % bound` lands in the lowest third half the time;
  // uniform_u64 must land there a third of the time (+-0.01 over 30'000
  // draws, about 4 standard deviations). The modulo variant fails the check.
  const std::uint64_t bound = 3 * (std::uint64_t{1} << 62);
  const std::uint64_t third = std::uint64_t{1} << 62;
  constexpr int draws = 30'000;
  prng rng(77);
  int low = 0;
  int low_modulo = 0;
  for (int i = 0; i < draws; ++i) {
    low += rng.uniform_u64(bound) < third ? 1 : 0;
    low_modulo += rng.next_u64() % bound < third ? 1 : 0;
  }
  CHECK(std::abs(static_cast<double>(low) / draws - 1.0 / 3.0) < 0.01);
  CHECK_FALSE(std::abs(static_cast<double>(low_modulo) / draws - 1.0 / 3.0) < 0.01);
}

TEST_CASE("uniform_i64 handles the extremes of int64") {
  // Goal: no overflow at any range. Method: the full range is the raw draw
  // reinterpreted; one-value ranges at both ends; two-value ranges at both
  // ends and across zero see both values; lo > hi fails its assertion.
  prng rng(11);
  prng raw = rng;
  bool negative = false;
  bool positive = false;
  for (int i = 0; i < 64; ++i) {
    const std::int64_t v = rng.uniform_i64(i64_min, i64_max);
    CHECK(v == static_cast<std::int64_t>(raw.next_u64()));
    negative = negative || v < 0;
    positive = positive || v > 0;
  }
  CHECK(negative);
  CHECK(positive);

  CHECK(rng.uniform_i64(i64_min, i64_min) == i64_min);
  CHECK(rng.uniform_i64(i64_max, i64_max) == i64_max);
  for (const auto& [lo, hi] : std::array<std::pair<std::int64_t, std::int64_t>, 3>{
           {{i64_min, i64_min + 1}, {i64_max - 1, i64_max}, {-1, 0}}}) {
    std::map<std::int64_t, int> seen;
    for (int i = 0; i < 64; ++i) seen[rng.uniform_i64(lo, hi)] += 1;
    CHECK(seen.size() == 2);
    CHECK(seen.begin()->first == lo);
    CHECK(seen.rbegin()->first == hi);
  }
  CHECK_THROWS_AS(rng.uniform_i64(1, 0), admit::assertion_failure);
}

TEST_CASE("uniform_i64 on a small signed range matches the reference and covers it") {
  // Goal: lo + uniform_u64(hi - lo + 1) with wrapping arithmetic. Method: the
  // first 12 values of [-5, 5] for seed 42, then all 11 values appear.
  prng rng(42);
  std::array<std::int64_t, 12> values{};
  for (auto& v : values) v = rng.uniform_i64(-5, 5);
  CHECK(values == std::array<std::int64_t, 12>{-5, -1, 2, 5, 5, 3, 2, 4, 3, 1, 2, -2});
  std::map<std::int64_t, int> seen;
  for (int i = 0; i < 1000; ++i) seen[rng.uniform_i64(-5, 5)] += 1;
  CHECK(seen.size() == 11);
  CHECK(seen.begin()->first == -5);
  CHECK(seen.rbegin()->first == 5);
}

TEST_CASE("uniform_01 lies in [0, 1) on the 2^-53 grid") {
  // Goal: the documented construction. Method: golden first values for
  // seed 42 (exact doubles), then 100'000 draws: all in [0, 1), all whole
  // multiples of 2^-53, mean 0.5 +- 0.005 (about 5 standard deviations).
  prng rng(42);
  CHECK(rng.uniform_01() == 0.08386297105988216);
  CHECK(rng.uniform_01() == 0.3789802506626686);
  CHECK(rng.uniform_01() == 0.6800434110281394);

  double sum = 0.0;
  constexpr int draws = 100'000;
  for (int i = 0; i < draws; ++i) {
    const double u = rng.uniform_01();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    const double scaled = u * 0x1.0p53;
    REQUIRE(scaled == static_cast<double>(static_cast<std::uint64_t>(scaled)));
    sum += u;
  }
  CHECK(std::abs(sum / draws - 0.5) < 0.005);

  // The extremes of the construction: all-zero and all-one top bits.
  CHECK(static_cast<double>(std::uint64_t{0} >> 11) * 0x1.0p-53 == 0.0);
  CHECK(static_cast<double>(u64_max >> 11) * 0x1.0p-53 < 1.0);
}

TEST_CASE("bernoulli_ppm is never true at 0, always true at 1'000'000") {
  // Goal: the integer edge cases and the draw-count rule. Method: 10'000
  // calls at each edge; both edges advance the stream alike; 250'000 ppm is
  // true 25% +- 1.5% of 10'000 times; more than a million fails its
  // assertion.
  prng never(8);
  prng always(8);
  for (int i = 0; i < 10'000; ++i) {
    REQUIRE_FALSE(never.bernoulli_ppm(0));
    REQUIRE(always.bernoulli_ppm(1'000'000));
  }
  CHECK(never == always);

  prng rng(8);
  int hits = 0;
  for (int i = 0; i < 10'000; ++i) hits += rng.bernoulli_ppm(250'000) ? 1 : 0;
  CHECK(std::abs(hits - 2500) < 150);
  CHECK_THROWS_AS(rng.bernoulli_ppm(1'000'001), admit::assertion_failure);
}

TEST_CASE("bernoulli_ppm is true exactly when a draw below one million is below ppm") {
  // Goal: the documented rule, to the boundary (an off-by-one would make
  // 0 ppm possible). Method: a copy of the generator shows the draw d; the
  // threshold d gives false and d + 1 gives true.
  prng rng(21);
  for (int i = 0; i < 1000; ++i) {
    prng at_boundary = rng;
    prng above_boundary = rng;
    const auto draw = static_cast<std::uint32_t>(rng.uniform_u64(1'000'000));
    REQUIRE_FALSE(at_boundary.bernoulli_ppm(draw));
    REQUIRE(above_boundary.bernoulli_ppm(draw + 1));
  }
}

TEST_CASE("shuffle is a deterministic Fisher-Yates permutation") {
  // Goal: same seed, same order, by the documented algorithm. Method: the
  // reference's order of 0..9 for seed 42; the result is a permutation;
  // empty and one-item spans draw nothing.
  prng rng(42);
  std::vector<int> items(10);
  std::iota(items.begin(), items.end(), 0);
  rng.shuffle(std::span{items});
  CHECK(items == std::vector<int>{9, 1, 4, 2, 8, 7, 6, 5, 3, 0});

  std::vector<int> sorted = items;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});

  const prng before = rng;
  std::vector<int> empty;
  rng.shuffle(std::span{empty});
  std::array<int, 1> one{7};
  rng.shuffle(std::span{one});
  CHECK(rng == before);
  CHECK(one[0] == 7);
}

TEST_CASE("shuffle gives every order of three items about equally often") {
  // Goal: no biased swaps (a classic Fisher-Yates mistake draws j from the
  // whole range, making some orders 25% likelier than others). Method:
  // 60'000 shuffles of {0, 1, 2}; each of the 6 orders within 4% of 10'000
  // (about 4 standard deviations). The mistaken variant fails the check.
  prng rng(31);
  std::map<std::array<int, 3>, int> orders;
  std::map<std::array<int, 3>, int> mistaken;
  for (int i = 0; i < 60'000; ++i) {
    std::array<int, 3> a{0, 1, 2};
    rng.shuffle(std::span{a});
    orders[a] += 1;

    std::array<int, 3> b{0, 1, 2};
    for (std::size_t k = 0; k < b.size(); ++k) std::swap(b[k], b[rng.uniform_u64(b.size())]);
    mistaken[b] += 1;
  }
  auto balanced = [](const std::map<std::array<int, 3>, int>& counts) {
    if (counts.size() != 6) return false;
    return std::all_of(counts.begin(), counts.end(),
                       [](const auto& entry) { return std::abs(entry.second - 10'000) < 400; });
  };
  CHECK(balanced(orders));
  CHECK_FALSE(balanced(mistaken));
}
