#include "sim/kernel/distribution.hpp"

#include <cmath>

namespace admit::sim {

namespace {

// Integer parameters become doubles exactly: the cap is below 2^53.
static_assert(duration_cap_ns < (std::int64_t{1} << 53));

// Acceptance per attempt is pi/4; 2^-222 odds of reaching this limit with a
// working generator.
constexpr int polar_attempts_max = 100;

bool is_duration(std::int64_t ns) { return ns >= 0 && ns <= duration_cap_ns; }

// The factories' check; the reason is only computed again on failure.
duration_dist checked(const duration_dist& d) {
  ADMIT_ASSERT(d.invalid_reason() == nullptr, d.invalid_reason());
  return d;
}

}  // namespace

std::int64_t round_ns(double ns) {
  ADMIT_ASSERT(!std::isnan(ns), "a duration computed as NaN: bad distribution parameters");
  if (!(ns > 0.0)) return 0;
  if (ns >= static_cast<double>(duration_cap_ns)) return duration_cap_ns;
  // std::round for 0 < ns < cap, without the library call (two per request in a generated workload):
  // truncation is exact below 2^63, the integer converts back exactly below 2^53 (above it `ns` has no
  // fraction), and the fraction ns - t is then exact too (Sterbenz), so a half rounds away from zero.
  auto t = static_cast<std::int64_t>(ns);
  if (ns - static_cast<double>(t) >= 0.5) ++t;
  return t;
}

double standard_normal(prng& rng) {
  for (int attempt = 0; attempt < polar_attempts_max; ++attempt) {
    const double u = 2.0 * rng.uniform_01() - 1.0;
    const double v = 2.0 * rng.uniform_01() - 1.0;
    const double s = u * u + v * v;
    // s == 0 would divide by zero; s >= 1 lies outside the unit disc.
    if (s < 1.0 && s != 0.0) return u * std::sqrt(-2.0 * std::log(s) / s);
  }
  ADMIT_ASSERT(false, "polar method rejected every attempt: broken generator");
  return 0.0;
}

std::int64_t exponential_ns(prng& rng, std::int64_t mean_ns) {
  ADMIT_ASSERT(is_duration(mean_ns), "exponential mean_ns must be in [0, duration_cap_ns]");
  const double u = rng.uniform_01();
  // 1 - u is exact and in (0, 1], so the logarithm is finite and <= 0.
  return round_ns(-static_cast<double>(mean_ns) * std::log(1.0 - u));
}

std::int64_t lognormal_ns(prng& rng, std::int64_t median_ns, double sigma) {
  ADMIT_ASSERT(is_duration(median_ns), "lognormal median_ns must be in [0, duration_cap_ns]");
  ADMIT_ASSERT(std::isfinite(sigma), "lognormal sigma must be finite");
  ADMIT_ASSERT(sigma >= 0.0, "lognormal sigma must be >= 0");
  const double z = standard_normal(rng);
  // 0 * exp(overflow) would be 0 * inf = NaN; the draw above still happens,
  // so the stream advances the same for every median.
  if (median_ns == 0) return 0;
  return round_ns(static_cast<double>(median_ns) * std::exp(sigma * z));
}

std::int64_t pareto_ns(prng& rng, std::int64_t scale_ns, double alpha) {
  ADMIT_ASSERT(is_duration(scale_ns), "pareto scale_ns must be in [0, duration_cap_ns]");
  ADMIT_ASSERT(std::isfinite(alpha), "pareto alpha must be finite");
  ADMIT_ASSERT(alpha > 0.0, "pareto alpha must be > 0");
  const double u = rng.uniform_01();
  if (scale_ns == 0) return 0;  // as in lognormal_ns: never 0 * inf
  // (1 - u)^(-1/alpha) written with exp and log only (no pow), >= 1.
  return round_ns(static_cast<double>(scale_ns) * std::exp(-std::log(1.0 - u) / alpha));
}

std::int64_t uniform_ns(prng& rng, std::int64_t lo_ns, std::int64_t hi_ns) {
  ADMIT_ASSERT(is_duration(lo_ns), "uniform lo_ns must be in [0, duration_cap_ns]");
  ADMIT_ASSERT(is_duration(hi_ns), "uniform hi_ns must be in [0, duration_cap_ns]");
  ADMIT_ASSERT(lo_ns <= hi_ns, "uniform needs lo_ns <= hi_ns");
  return rng.uniform_i64(lo_ns, hi_ns);
}

std::string_view duration_kind_name(duration_kind kind) noexcept {
  switch (kind) {
    case duration_kind::fixed: return "fixed";
    case duration_kind::uniform: return "uniform";
    case duration_kind::exponential: return "exponential";
    case duration_kind::lognormal: return "lognormal";
    case duration_kind::pareto: return "pareto";
  }
  return "invalid";
}

std::optional<duration_kind> parse_duration_kind(std::string_view name) noexcept {
  for (const auto kind : {duration_kind::fixed, duration_kind::uniform, duration_kind::exponential,
                          duration_kind::lognormal, duration_kind::pareto}) {
    if (duration_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

duration_dist duration_dist::fixed(std::int64_t value_ns) {
  duration_dist d;
  d.kind = duration_kind::fixed;
  d.value_ns = value_ns;
  return checked(d);
}

duration_dist duration_dist::uniform(std::int64_t lo_ns, std::int64_t hi_ns) {
  duration_dist d;
  d.kind = duration_kind::uniform;
  d.value_ns = lo_ns;
  d.hi_ns = hi_ns;
  return checked(d);
}

duration_dist duration_dist::exponential(std::int64_t mean_ns) {
  duration_dist d;
  d.kind = duration_kind::exponential;
  d.value_ns = mean_ns;
  return checked(d);
}

duration_dist duration_dist::lognormal(std::int64_t median_ns, double sigma) {
  duration_dist d;
  d.kind = duration_kind::lognormal;
  d.value_ns = median_ns;
  d.sigma = sigma;
  return checked(d);
}

duration_dist duration_dist::pareto(std::int64_t scale_ns, double alpha) {
  duration_dist d;
  d.kind = duration_kind::pareto;
  d.value_ns = scale_ns;
  d.alpha = alpha;
  return checked(d);
}

const char* duration_dist::invalid_reason() const noexcept {
  if (!is_duration(value_ns)) return "value_ns must be in [0, duration_cap_ns]";
  const bool uses_hi = kind == duration_kind::uniform;
  const bool uses_sigma = kind == duration_kind::lognormal;
  const bool uses_alpha = kind == duration_kind::pareto;
  if (!uses_hi && hi_ns != 0) return "hi_ns is only for uniform and must stay 0";
  if (!uses_sigma && sigma != 0.0) return "sigma is only for lognormal and must stay 0";
  if (!uses_alpha && alpha != 0.0) return "alpha is only for pareto and must stay 0";
  switch (kind) {
    case duration_kind::fixed:
    case duration_kind::exponential: return nullptr;
    case duration_kind::uniform:
      if (!is_duration(hi_ns)) return "hi_ns must be in [0, duration_cap_ns]";
      if (hi_ns < value_ns) return "uniform needs value_ns (lower bound) <= hi_ns";
      return nullptr;
    case duration_kind::lognormal:
      // !(sigma >= 0) also rejects NaN.
      if (!(sigma >= 0.0) || !std::isfinite(sigma)) return "sigma must be finite and >= 0";
      return nullptr;
    case duration_kind::pareto:
      if (!(alpha > 0.0) || !std::isfinite(alpha)) return "alpha must be finite and > 0";
      return nullptr;
  }
  return "unknown kind";
}

std::int64_t duration_dist::sample(prng& rng) const {
  ADMIT_ASSERT(invalid_reason() == nullptr, "sampling an invalid duration_dist");
  switch (kind) {
    case duration_kind::fixed: return value_ns;
    case duration_kind::uniform: return uniform_ns(rng, value_ns, hi_ns);
    case duration_kind::exponential: return exponential_ns(rng, value_ns);
    case duration_kind::lognormal: return lognormal_ns(rng, value_ns, sigma);
    case duration_kind::pareto: return pareto_ns(rng, value_ns, alpha);
  }
  ADMIT_ASSERT(false, "unknown duration kind");
  return 0;
}

std::int64_t duration_dist::mean_ns() const {
  ADMIT_ASSERT(invalid_reason() == nullptr, "mean of an invalid duration_dist");
  switch (kind) {
    case duration_kind::fixed: return value_ns;
    case duration_kind::uniform: return value_ns + (hi_ns - value_ns + 1) / 2;  // ties up
    case duration_kind::exponential: return value_ns;
    case duration_kind::lognormal:
      if (value_ns == 0) return 0;  // never 0 * inf
      return round_ns(static_cast<double>(value_ns) * std::exp(sigma * sigma / 2.0));
    case duration_kind::pareto:
      if (value_ns == 0) return 0;
      if (!(alpha > 1.0)) return duration_cap_ns;
      return round_ns(static_cast<double>(value_ns) * alpha / (alpha - 1.0));
  }
  ADMIT_ASSERT(false, "unknown duration kind");
  return 0;
}

}  // namespace admit::sim
