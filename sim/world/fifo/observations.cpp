#include "sim/world/fifo/observations.hpp"

#include <algorithm>
#include <vector>

namespace admit::world::fifo_world {

observations::observations(const scenario::scenario& sc, std::uint64_t total_requests)
    : keep_all_(total_requests <= 10'000) {
  std::vector<const scenario::observation*> stack;
  for (const auto& c : sc.cases) stack.push_back(&c.what);
  while (!stack.empty()) {
    const scenario::observation* o = stack.back();
    stack.pop_back();
    if (o->k == scenario::observation::kind::snapshot) snapshot_refs_.insert({o->target, o->at_ns});
    if (o->k == scenario::observation::kind::response || o->k == scenario::observation::kind::client_exception)
      kept_ids_.insert(o->target);
    for (const auto& ch : o->children) stack.push_back(&ch.second);
  }
}

std::set<vtime_ns> observations::snapshot_instants() const {
  std::set<vtime_ns> out;
  for (const auto& s : snapshot_refs_) out.insert(s.second);
  return out;
}

bool observations::snapshot_due(vtime_ns t) const {
  return std::any_of(snapshot_refs_.begin(), snapshot_refs_.end(), [&](const auto& r) { return r.second == t; });
}

void observations::capture(vtime_ns t, const gate_set& gates, run_record& rec) const {
  for (const auto& [gate_name, at] : snapshot_refs_) {
    if (at != t) continue;
    for (const auto& g : gates)
      if (g->name == gate_name) rec.snapshots.push_back(captured_snapshot{gate_name, t, g->gate().core().snap()});
  }
}

}  // namespace admit::world::fifo_world
