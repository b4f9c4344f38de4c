// finding_kinds: the kinds of finding of a search (a variant and an
// invariant it broke), as explore's summary lists them under
// totals.by_kind; shared by explore and merge, whose merged summary must
// be the bytes one machine would have written.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/admit_assert.hpp"

namespace admit::cli {

// One cause of a kind of finding (a row of sim/check/causes.hpp): in how many of the kind's seeds
// the world named it for the invariant the kind names, the first of them, and its sentence there.
struct kind_cause {
  std::uint64_t seeds = 0;
  std::uint64_t first_seed = 0;
  std::string example;
};

struct finding_kind {
  std::string variant;
  std::string invariant;
  bool counterexample = false;
  std::uint64_t first_seed = 0;
  std::uint64_t seeds = 0;
  std::map<std::string, kind_cause> causes;  // by cause kind
  auto key() const { return std::make_pair(variant, invariant); }

  // Adds `c` (a seed's, or another shard's for the same kind): the seeds summed (by the caller,
  // which checks the sum), the example of the least first seed kept. Seeds arrive in any order
  // across shards, so the example is chosen by seed, never by arrival.
  void add_cause(const std::string& kind, const kind_cause& c) {
    ADMIT_ASSERT(c.seeds >= 1, "a cause named in at least one seed");
    auto [it, inserted] = causes.emplace(kind, c);
    if (inserted) return;
    it->second.seeds += c.seeds;
    if (c.first_seed < it->second.first_seed) {
      it->second.first_seed = c.first_seed;
      it->second.example = c.example;
    }
  }
};

using finding_kind_map = std::map<std::pair<std::string, std::string>, finding_kind>;

// The kinds in the summary's order: counterexamples first, then by the seed
// that first showed them; ties keep (variant, invariant) order.
inline std::vector<finding_kind> kinds_in_summary_order(const finding_kind_map& kinds) {
  std::vector<finding_kind> order;
  order.reserve(kinds.size());
  for (const auto& [key, k] : kinds) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [](const finding_kind& a, const finding_kind& b) {
    if (a.counterexample != b.counterexample) return a.counterexample;
    return a.first_seed < b.first_seed;
  });
  return order;
}

// totals.by_kind.
inline nlohmann::ordered_json by_kind_json(const std::vector<finding_kind>& kinds) {
  nlohmann::ordered_json by_kind = nlohmann::ordered_json::array();
  for (const finding_kind& k : kinds) {
    nlohmann::ordered_json kj;
    kj["variant"] = k.variant;
    kj["invariant"] = k.invariant;
    kj["counterexample"] = k.counterexample;
    kj["seeds"] = k.seeds;
    kj["first_seed"] = k.first_seed;
    // Most seeds first, then the earliest, then by kind: an order of the counts alone, so a merge
    // of shards writes it as the search as one does.
    std::vector<std::pair<std::string, kind_cause>> causes(k.causes.begin(), k.causes.end());
    std::stable_sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) {
      if (a.second.seeds != b.second.seeds) return a.second.seeds > b.second.seeds;
      return a.second.first_seed < b.second.first_seed;
    });
    nlohmann::ordered_json cj = nlohmann::ordered_json::array();
    for (const auto& [kind, c] : causes)
      cj.push_back(nlohmann::ordered_json{{"kind", kind}, {"seeds", c.seeds}, {"first_seed", c.first_seed}, {"example", c.example}});
    kj["causes"] = std::move(cj);
    by_kind.push_back(std::move(kj));
  }
  return by_kind;
}

}  // namespace admit::cli
