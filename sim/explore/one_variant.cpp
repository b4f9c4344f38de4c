#include "sim/explore/one_variant.hpp"

#include <stdexcept>

#include "sim/world/fault_draw.hpp"

namespace admit::explore {

scenario::scenario one_variant(const scenario::scenario& base, const std::string& variant) {
  scenario::scenario sc = world::with_drawn_faults(base, base.seed);
  sc.faults.rates.reset();
  if (variant.empty()) return sc;
  for (auto& g : sc.gates) {
    if (g.kind != scenario::gate_kind::lease) continue;
    if (scenario::keep_only_run(g.lease, variant)) return sc;
  }
  throw std::invalid_argument("the scenario has no lease variant or protocol \"" + variant + "\"");
}

std::vector<std::string> variants_of(const scenario::scenario& sc) {
  for (const auto& g : sc.gates)
    if (g.kind == scenario::gate_kind::lease) return scenario::run_names(g.lease);
  return {""};
}

}  // namespace admit::explore
