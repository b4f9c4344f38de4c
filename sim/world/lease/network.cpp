#include "sim/world/lease/network.hpp"

namespace admit::world::lease {

network::network(sim::scheduler& sched, const redis_node& node, script_server& server, lease_monitors& monitors,
                 std::string_view key, std::size_t workers, bool split_add)
    : sched_(sched), node_(node), server_(server), monitors_(monitors), key_(key), split_add_(split_add) {
  worker_names_.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) worker_names_.push_back("worker:" + std::to_string(i));
}

bool network::cut_between(const std::string& a, const std::string& b) const {
  const vtime_ns now = sched_.now_ns();
  for (const auto& c : cuts_) {
    if (now >= c.until_ns) continue;
    if (c.b.empty() && (c.a == a || c.a == b)) return true;
    if ((c.a == a && c.b == b) || (c.a == b && c.b == a)) return true;
  }
  return false;
}

}  // namespace admit::world::lease
