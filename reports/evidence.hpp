// evidence: what a result that is not a violation rests on.
//
// A search that found nothing has not shown that nothing is there: it ran n
// seeds, injected so many faults of each kind, and nothing broke. What that
// is worth is a bound: if each seed of the same search broke with chance p,
// n clean seeds in a row happen with chance (1 - p)^n, which is below 5 %
// once p > 1 - 0.05^(1/n) (about 3/n). So with 95 % confidence a defect that
// strikes more than that share of seeds would have shown. The reports of
// `explore`, `matrix` and `sweep` carry this next to every result that is not
// a violation, and their words change with it: "held in 300 seeds", never a
// bare "holds". A result that broke says k of n, with its first seed.
//
// Every figure is an integer (the bound in parts per million, rounded up, so
// that it never claims more than the seeds show); the same seeds give the
// same bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/fault_kinds.hpp"

namespace admit::reports {

// The confidence every bound is stated at, and its complement as the bound's base.
inline constexpr int evidence_confidence_percent = 95;

// The upper bound, in parts per million rounded up, on the chance that one
// more seed of the same search breaks, after `clean` seeds in a row broke
// nothing: 1 - 0.05^(1/clean). 1,000,000 (nothing known) when clean is 0.
std::uint64_t bound_ppm(std::uint64_t clean);
// K such that a defect striking more than 1 seed in K would have shown
// (floor(1 / bound)); 1 when the bound is above one half.
std::uint64_t one_seed_in(std::uint64_t clean);
// The least number of clean seeds whose bound is below `ppm` (1 to 999,999): what a search run
// "until the bound falls below P" needs when nothing breaks and nothing is cut.
std::uint64_t seeds_for_bound(std::uint64_t ppm);
// A share as --until-bound takes it: "1%", "0.5%" or "0.01", in ppm; nullopt unless it is from
// 0.001% (10 ppm, 332,858 seeds) to 50%.
std::optional<std::uint64_t> parse_share_ppm(const std::string& text);
// A bound in ppm as a percentage rounded up to a tenth: "1.0%", "17.1%", "0.3%", "100%".
std::string bound_percent(std::uint64_t ppm);
// "1,000": a count with thousands separated.
std::string count_text(std::uint64_t n);

struct evidence {
  std::uint64_t seeds = 0;      // seeds that ran to their end (or to their first violation)
  std::uint64_t violating = 0;  // of them, those that broke an invariant
  std::optional<std::uint64_t> first_violating_seed;
  // Fault events the runs injected (a fault whose time the run reached), by kind
  // (scenario::fault_kind order), summed over every run of every seed.
  std::array<std::uint64_t, scenario::fault_kind_count> faults{};

  // Coverage: each bucket of the world (its probes, then which faults met which states: a lease
  // run's lease_coverage.hpp), with how many seeds hit it. Empty when no run was judged.
  std::vector<std::pair<std::string, std::uint64_t>> coverage;

  void add_faults(const std::array<std::uint64_t, scenario::fault_kind_count>& f) {
    for (std::size_t i = 0; i < f.size(); ++i) faults[i] += f[i];
  }
  // One seed's runs: a bucket any of them hit counts the seed once. `runs` lists each run's buckets
  // (the same names in the same order for every run of a scenario).
  void add_coverage(const std::vector<const std::vector<std::pair<std::string, std::uint64_t>>*>& runs);
  std::uint64_t coverage_hit() const;
  // One seed's runs, by the rule every search judges by: a seed that broke an invariant counts (the
  // least such seed is the first); one that did not counts unless a limit cut a run (it judged nothing
  // past the cut). Its coverage counts when the seed does.
  void add_seed(std::uint64_t seed, bool broke, bool cut,
                const std::vector<const std::vector<std::pair<std::string, std::uint64_t>>*>& runs);
  std::uint64_t faults_total() const;
  // The sentence a reader can sign: "no violation in 1,000 seeds: a defect that strikes more than
  // 1 seed in 334 would have shown with 95% confidence", or "8 of 300 seeds broke an invariant,
  // the first seed 12".
  std::string statement() const;
  // "crash 120, pause 33" (the kinds injected at least once), or "none".
  std::string faults_text() const;
  // {"seeds", "violating", "first_violating_seed", "faults_injected": {kind: n, ...} (every kind),
  //  "bound_95_ppm" and "one_seed_in" (null once a seed broke), "statement", "coverage": {"hit",
  //  "total", "never_hit": [names], and with `buckets` "seeds_by_bucket": {name: seeds}}}.
  nlohmann::ordered_json to_json(bool buckets = true) const;
  // Read back what to_json wrote (the derived bound and statement are made again, not read).
  // Throws evidence_error naming the JSON path below the object, and what was expected. Without
  // `buckets` (what to_json(false) wrote: the names of the buckets never hit, and how many were
  // hit) the hit buckets come back unnamed, one seed each, before those never hit: to_json(false)
  // writes them as it read them, and to_json(true) cannot be had from such a file.
  static evidence from_json(const nlohmann::ordered_json& j, bool buckets = true);
  // The evidence of two disjoint sets of seeds of one search, as one (admitsim merge). Throws
  // evidence_error when their buckets differ (no shards of one search).
  void merge(const evidence& other);
};

struct evidence_error : std::runtime_error {
  evidence_error(std::string p, const std::string& what) : std::runtime_error(what), path(std::move(p)) {}
  std::string path;  // "/seeds", "/faults_injected/crash", ... ("" for the object itself)
};

}  // namespace admit::reports
