#include "sim/world/lease/lease_coverage.hpp"

#include "gate/admit_assert.hpp"

namespace admit::world::lease {

const std::vector<std::string>& lease_bucket_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const char* kind : scenario::fault_kind_names)
      for (const char* phase : client_phase_names) n.push_back(std::string(kind) + " while " + phase);
    for (const char* kind : scenario::fault_kind_names)
      for (const char* state : server_state_names) n.push_back(std::string(kind) + " " + state);
    for (const char* miss : near_miss_names) n.emplace_back(miss);
    return n;
  }();
  ADMIT_ASSERT(names.size() == lease_bucket_count, "one name a bucket");
  return names;
}

lease_coverage::lease_coverage(const scenario::scenario& sc, sim::scheduler& sched, const redis_node& node,
                               const server_side& server)
    : sc_(sc), sched_(sched), node_(node), server_(server), limit_(sc.gates.front().lease.limit),
      workers_(static_cast<std::size_t>(sc.fleet.workers)), counts_(lease_bucket_count, 0) {
  ADMIT_ASSERT(limit_ >= 1 && !workers_.empty(), "the loader refuses a limit of 0 and an empty fleet");
}

void lease_coverage::set(std::size_t wi, client_phase p) {
  ADMIT_ASSERT(wi < workers_.size(), "a worker of the fleet");
  workers_[wi].phase = p;
}

client_phase lease_coverage::phase_of(std::size_t wi) const {
  const worker& w = workers_[wi];
  return w.phase == client_phase::holding && w.renewals > 0 ? client_phase::renewing : w.phase;
}

void lease_coverage::on(const fact::worker_crashed& f) {
  worker& w = workers_[f.worker];
  w.alive = false;
  w.phase = client_phase::between;
}

void lease_coverage::on(const fact::worker_restarted& f) { workers_[f.worker].alive = true; }

void lease_coverage::on(const fact::call_sent& f) {
  if (f.op == redis::script_op::renew) ++workers_[f.worker].renewals;
}

void lease_coverage::on(const fact::call_ended& f) {
  if (f.op != redis::script_op::renew) return;
  worker& w = workers_[f.worker];
  ADMIT_ASSERT(w.renewals > 0, "a renewal call ends once, after it was sent");
  --w.renewals;
}

void lease_coverage::hit(std::size_t bucket) {
  ADMIT_ASSERT(bucket < counts_.size(), "a bucket of the table");
  ++counts_[bucket];
}

void lease_coverage::on(const fact::fault_began& f) {
  const auto kind = static_cast<std::size_t>(f.spec.kind);
  ADMIT_ASSERT(kind < scenario::fault_kind_count, "a fault of a known kind");
  // The workers it strikes: the one it names, or (a fault of Redis, the portal, every link) every live one.
  std::array<bool, client_phase_count> phases{};
  const auto one = [&](std::size_t wi) {
    if (wi < workers_.size()) phases[static_cast<std::size_t>(phase_of(wi))] = true;
  };
  const auto is_worker = [](const scenario::node_ref& n) { return n.k == scenario::node_ref::kind::worker; };
  if (f.spec.target && is_worker(*f.spec.target)) {
    one(static_cast<std::size_t>(f.spec.target->worker));
  } else if (f.spec.between && (is_worker(f.spec.between->first) || is_worker(f.spec.between->second))) {
    if (is_worker(f.spec.between->first)) one(static_cast<std::size_t>(f.spec.between->first.worker));
    if (is_worker(f.spec.between->second)) one(static_cast<std::size_t>(f.spec.between->second.worker));
  } else {
    for (std::size_t wi = 0; wi < workers_.size(); ++wi)
      if (workers_[wi].alive) one(wi);
  }
  for (std::size_t p = 0; p < client_phase_count; ++p)
    if (phases[p]) hit(kind * client_phase_count + p);
  // The holders on the node now, by the server's clock, as the causes read them.
  const std::int64_t now_us = node_.server_now_us(sched_.now_ns());
  const redis::sorted_set* set = node_.peek_set(server_.holders_key(), now_us);
  if (set == nullptr) return;
  std::int64_t live = 0, expired = 0;
  for (const redis::sorted_set::entry& e : set->entries()) (server_.live_score(e.score, now_us / 1000) ? live : expired) += 1;
  const std::size_t states = scenario::fault_kind_count * client_phase_count;
  if (live >= limit_) hit(states + kind * server_state_count + 0);
  if (expired > 0) hit(states + kind * server_state_count + 1);
}

void lease_coverage::write(run_record& rec, std::int64_t portal_cap) const {
  ADMIT_ASSERT(portal_cap >= 1, "a portal's cap is at least 1");
  const std::vector<std::string>& names = lease_bucket_names();
  rec.coverage.clear();
  rec.coverage.reserve(names.size());
  for (std::size_t b = 0; b + near_miss_count < names.size(); ++b) rec.coverage.emplace_back(names[b], counts_[b]);
  const std::size_t misses = names.size() - near_miss_count;
  rec.coverage.emplace_back(names[misses], rec.metrics.portal_inflight_max >= portal_cap ? 1 : 0);
  rec.coverage.emplace_back(names[misses + 1], rec.metrics.gate_inflight_max >= limit_ ? 1 : 0);
  rec.coverage.emplace_back(names[misses + 2], lost_under_holder_);
  ADMIT_ASSERT(rec.coverage.size() == lease_bucket_count, "every bucket written, in order");
}

}  // namespace admit::world::lease
