#include "sim/world/lease/network.hpp"

#include "gate/admit_assert.hpp"

namespace admit::world::lease {

network::network(sim::scheduler& sched, const redis_node& node, script_server& server, fact_bus& facts,
                 std::size_t workers, bool split_add)
    : sched_(sched), node_(node), server_(server), facts_(facts), split_add_(split_add) {
  worker_names_.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) worker_names_.push_back("worker:" + std::to_string(i));
  ADMIT_ASSERT(worker_names_.size() == workers, "one name per worker");
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

void network::listen(std::string channel, bool sharded, std::size_t wi, std::function<void()> on_message) {
  ADMIT_ASSERT(wi < worker_names_.size() && on_message, "a worker of this fleet listens with a handler");
  listeners_[sharded ? 1 : 0][std::move(channel)][wi] = std::move(on_message);
}

void network::stop_listening(const std::string& channel, bool sharded, std::size_t wi) {
  listener_map& m = listeners_[sharded ? 1 : 0];
  const auto it = m.find(channel);
  if (it == m.end()) return;
  it->second.erase(wi);
  if (it->second.empty()) m.erase(it);
}

std::int64_t network::bus::publish(std::string_view channel, std::string_view /*message*/, bool sharded) {
  const listener_map& m = net_.listeners_[sharded ? 1 : 0];
  const auto it = m.find(channel);
  if (it == m.end()) return 0;
  for (const auto& [wi, fn] : it->second) {
    net_.sched_.schedule_after(redis_latency_ns, [n = &net_, ch = std::string(channel), w = wi, sharded] {
      // Delivered if the worker still listens and its link is up when the message arrives.
      const listener_map& now = n->listeners_[sharded ? 1 : 0];
      const auto l = now.find(ch);
      if (l == now.end() || !n->link_up(w)) return;
      const auto f = l->second.find(w);
      if (f != l->second.end()) f->second();
    });
  }
  return static_cast<std::int64_t>(it->second.size());
}

}  // namespace admit::world::lease
