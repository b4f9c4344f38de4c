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

namespace admit::cli {

struct finding_kind {
  std::string variant;
  std::string invariant;
  bool counterexample = false;
  std::uint64_t first_seed = 0;
  std::uint64_t seeds = 0;
  auto key() const { return std::make_pair(variant, invariant); }
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
    by_kind.push_back(std::move(kj));
  }
  return by_kind;
}

}  // namespace admit::cli
