#include "reports/evidence.hpp"

#include <cmath>

#include "gate/admit_assert.hpp"

namespace admit::reports {

std::uint64_t bound_ppm(std::uint64_t clean) {
  if (clean == 0) return 1'000'000;
  // 1 - 0.05^(1/n) = -expm1(ln(0.05) / n): expm1 keeps its digits for a large n, where 1 - pow(...)
  // would cancel them.
  const double b = -std::expm1(std::log(0.05) / static_cast<double>(clean));
  ADMIT_ASSERT(b > 0 && b < 1, "the bound of at least one clean seed is a chance strictly between 0 and 1");
  const auto ppm = static_cast<std::uint64_t>(std::ceil(b * 1e6));
  ADMIT_ASSERT(ppm >= 1 && ppm <= 1'000'000, "a bound in ppm is between one and a million");
  return ppm;
}

std::uint64_t one_seed_in(std::uint64_t clean) {
  if (clean == 0) return 1;
  const double b = -std::expm1(std::log(0.05) / static_cast<double>(clean));
  const auto k = static_cast<std::uint64_t>(std::floor(1.0 / b));
  ADMIT_ASSERT(k >= 1 && static_cast<double>(k) <= 1.0 / b, "1 in K is no rarer than the bound");
  return k;
}

std::uint64_t seeds_for_bound(std::uint64_t ppm) {
  ADMIT_ASSERT(ppm >= 1 && ppm < 1'000'000, "a share strictly between 0 and 1");
  // 1 - 0.05^(1/n) < p  <=>  n > ln(0.05) / ln(1 - p); then settled on bound_ppm's own rounding.
  const double p = static_cast<double>(ppm) / 1e6;
  auto n = static_cast<std::uint64_t>(std::ceil(std::log(0.05) / std::log1p(-p)));
  if (n == 0) n = 1;
  while (bound_ppm(n) >= ppm) ++n;
  while (n > 1 && bound_ppm(n - 1) < ppm) --n;
  ADMIT_ASSERT(bound_ppm(n) < ppm && (n == 1 || bound_ppm(n - 1) >= ppm), "the least n whose bound is below the share");
  return n;
}

std::optional<std::uint64_t> parse_share_ppm(const std::string& text) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  if (t.empty() || t.size() > 20) return std::nullopt;
  // Digits with at most one point, no sign, no exponent: read exactly, in millionths.
  std::uint64_t whole = 0, frac = 0, frac_digits = 0;
  bool point = false;
  for (const char c : t) {
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    if (!point) {
      whole = whole * 10 + static_cast<std::uint64_t>(c - '0');
      if (whole > 100) return std::nullopt;
    } else if (frac_digits < 9) {
      frac = frac * 10 + static_cast<std::uint64_t>(c - '0');
      ++frac_digits;
    } else if (c != '0') {
      return std::nullopt;  // finer than a billionth of a unit: no share this reads
    }
  }
  if (t == ".") return std::nullopt;
  // The value in billionths of its unit, then in ppm of a whole (a percent is a hundredth).
  std::uint64_t scale = 1;
  for (std::uint64_t i = frac_digits; i < 9; ++i) scale *= 10;
  const std::uint64_t billionths = whole * 1'000'000'000 + frac * scale;
  const std::uint64_t per = percent ? 100'000 : 1'000;  // billionths per ppm
  if (billionths % per != 0) return std::nullopt;       // finer than a ppm
  const std::uint64_t ppm = billionths / per;
  if (ppm < 10 || ppm > 500'000) return std::nullopt;
  return ppm;
}

std::string bound_percent(std::uint64_t ppm) {
  ADMIT_ASSERT(ppm <= 1'000'000, "a chance in ppm");
  const std::uint64_t tenths = (ppm + 999) / 1'000;  // rounded up: the bound never shrinks in print
  if (tenths >= 1'000) return "100%";
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

std::string count_text(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::uint64_t evidence::faults_total() const {
  std::uint64_t n = 0;
  for (const std::uint64_t f : faults) n += f;
  return n;
}

void evidence::add_coverage(const std::vector<const std::vector<std::pair<std::string, std::uint64_t>>*>& runs) {
  for (const auto* run : runs) {
    if (coverage.empty())
      for (const auto& [name, n] : *run) coverage.emplace_back(name, 0);
    // A scenario's runs share one world, so one list of buckets; a run of another list counts nothing.
    if (run->size() != coverage.size()) return;
  }
  for (std::size_t b = 0; b < coverage.size(); ++b) {
    bool hit = false;
    for (const auto* run : runs) hit = hit || (*run)[b].second != 0;
    if (hit) ++coverage[b].second;
  }
}

void evidence::add_seed(std::uint64_t seed, bool broke, bool cut,
                        const std::vector<const std::vector<std::pair<std::string, std::uint64_t>>*>& runs) {
  if (!broke && cut) return;
  ++seeds;
  if (broke) {
    ++violating;
    if (!first_violating_seed || seed < *first_violating_seed) first_violating_seed = seed;
  }
  add_coverage(runs);
}

std::uint64_t evidence::coverage_hit() const {
  std::uint64_t n = 0;
  for (const auto& [name, seeds] : coverage) n += seeds != 0;
  return n;
}

std::string evidence::statement() const {
  ADMIT_ASSERT(violating <= seeds, "the violating seeds are among those run");
  ADMIT_ASSERT(first_violating_seed.has_value() == (violating != 0), "a first violating seed exactly when one broke");
  const std::string n = count_text(seeds) + (seeds == 1 ? " seed" : " seeds");
  if (violating != 0)
    return count_text(violating) + " of " + n + " broke an invariant, the first seed " +
           std::to_string(*first_violating_seed);
  if (seeds == 0) return "no seed ran to its end: nothing is known";
  const std::uint64_t k = one_seed_in(seeds);
  const std::string strikes =
      k >= 2 ? "more than 1 seed in " + count_text(k) : "more than " + bound_percent(bound_ppm(seeds)) + " of seeds";
  return "no violation in " + n + ": a defect that strikes " + strikes + " would have shown with " +
         std::to_string(evidence_confidence_percent) + "% confidence";
}

std::string evidence::faults_text() const {
  std::string out;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (faults[i] == 0) continue;
    if (!out.empty()) out += ", ";
    out += std::string(scenario::fault_kind_names[i]) + " " + count_text(faults[i]);
  }
  return out.empty() ? "none" : out;
}

nlohmann::ordered_json evidence::to_json(bool buckets) const {
  nlohmann::ordered_json j;
  j["seeds"] = seeds;
  j["violating"] = violating;
  j["first_violating_seed"] = first_violating_seed ? nlohmann::ordered_json(*first_violating_seed) : nullptr;
  nlohmann::ordered_json f = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < faults.size(); ++i) f[scenario::fault_kind_names[i]] = faults[i];
  j["faults_injected"] = std::move(f);
  if (violating == 0) {
    j["bound_95_ppm"] = bound_ppm(seeds);
    j["one_seed_in"] = one_seed_in(seeds);
  } else {
    j["bound_95_ppm"] = nullptr;
    j["one_seed_in"] = nullptr;
  }
  j["statement"] = statement();
  nlohmann::ordered_json c;
  c["hit"] = coverage_hit();
  c["total"] = coverage.size();
  nlohmann::ordered_json never = nlohmann::ordered_json::array();
  for (const auto& [name, seeds] : coverage)
    if (seeds == 0) never.push_back(name);
  c["never_hit"] = std::move(never);
  if (buckets) {
    nlohmann::ordered_json by = nlohmann::ordered_json::object();
    for (const auto& [name, seeds] : coverage) by[name] = seeds;
    c["seeds_by_bucket"] = std::move(by);
  }
  j["coverage"] = std::move(c);
  return j;
}

evidence evidence::from_json(const nlohmann::ordered_json& j, bool buckets) {
  if (!j.is_object()) throw evidence_error("", "expected an object (the evidence admitsim writes)");
  const auto number = [](const nlohmann::ordered_json& o, const std::string& path, const char* key) -> std::uint64_t {
    const auto it = o.find(key);
    if (it == o.end()) throw evidence_error(path + "/" + key, "missing");
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0))
      throw evidence_error(path + "/" + key, "expected an integer from 0 to 2^64-1");
    return it->get<std::uint64_t>();
  };
  evidence e;
  e.seeds = number(j, "", "seeds");
  e.violating = number(j, "", "violating");
  if (e.violating > e.seeds) throw evidence_error("/violating", "expected at most the seeds, " + std::to_string(e.seeds));
  const auto first = j.find("first_violating_seed");
  if (first == j.end()) throw evidence_error("/first_violating_seed", "missing");
  if (!first->is_null()) e.first_violating_seed = number(j, "", "first_violating_seed");
  if (e.first_violating_seed.has_value() != (e.violating != 0))
    throw evidence_error("/first_violating_seed", "expected a seed exactly when some seed broke an invariant");
  const auto faults_it = j.find("faults_injected");
  if (faults_it == j.end() || !faults_it->is_object())
    throw evidence_error("/faults_injected", "expected an object of a count per fault kind");
  for (std::size_t k = 0; k < e.faults.size(); ++k) e.faults[k] = number(*faults_it, "/faults_injected", scenario::fault_kind_names[k]);
  const auto cov = j.find("coverage");
  if (cov == j.end() || !cov->is_object()) throw evidence_error("/coverage", "expected an object");
  if (!buckets) {
    const std::uint64_t hit = number(*cov, "/coverage", "hit");
    const std::uint64_t total = number(*cov, "/coverage", "total");
    const auto never = cov->find("never_hit");
    if (never == cov->end() || !never->is_array()) throw evidence_error("/coverage/never_hit", "expected an array of bucket names");
    // The hit buckets are made up one by one: a file's count may not ask for more than a world has.
    constexpr std::uint64_t buckets_max = 100'000;
    if (total > buckets_max) throw evidence_error("/coverage/total", "expected at most " + std::to_string(buckets_max) + " buckets");
    if (hit > total || total - hit != never->size())
      throw evidence_error("/coverage/total", "expected the " + std::to_string(hit) + " buckets hit and the " +
                                                  std::to_string(never->size()) + " never hit");
    e.coverage.assign(hit, {std::string(), 1});
    for (std::size_t i = 0; i < never->size(); ++i) {
      if (!(*never)[i].is_string()) throw evidence_error("/coverage/never_hit/" + std::to_string(i), "expected a bucket name");
      e.coverage.emplace_back((*never)[i].get<std::string>(), 0);
    }
    return e;
  }
  const auto by = cov->find("seeds_by_bucket");
  if (by == cov->end() || !by->is_object())
    throw evidence_error("/coverage/seeds_by_bucket", "expected an object of seeds per bucket");
  for (const auto& [name, seeds] : by->items()) {
    (void)seeds;
    e.coverage.emplace_back(name, number(*by, "/coverage/seeds_by_bucket", name.c_str()));
  }
  return e;
}

void evidence::merge(const evidence& other) {
  ADMIT_ASSERT(seeds + other.seeds >= seeds, "seed counts of one search fit 64 bits");
  seeds += other.seeds;
  violating += other.violating;
  if (other.first_violating_seed && (!first_violating_seed || *other.first_violating_seed < *first_violating_seed))
    first_violating_seed = other.first_violating_seed;
  add_faults(other.faults);
  if (coverage.empty()) {
    coverage = other.coverage;
    return;
  }
  if (other.coverage.empty()) return;  // a shard that judged no seed hit nothing
  // Read from files (admitsim merge): shards of one search list the same buckets in the same order.
  if (coverage.size() != other.coverage.size())
    throw evidence_error("/coverage/seeds_by_bucket", "expected the " + std::to_string(coverage.size()) +
                                                          " buckets of the other shards, got " +
                                                          std::to_string(other.coverage.size()));
  for (std::size_t b = 0; b < coverage.size(); ++b) {
    if (coverage[b].first != other.coverage[b].first)
      throw evidence_error("/coverage/seeds_by_bucket", "expected the bucket \"" + coverage[b].first +
                                                            "\" of the other shards, got \"" + other.coverage[b].first + "\"");
    coverage[b].second += other.coverage[b].second;
  }
}

}  // namespace admit::reports
