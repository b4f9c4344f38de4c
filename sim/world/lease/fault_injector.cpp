#include "sim/world/lease/fault_injector.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"

namespace admit::world::lease {

template <class Lose>
void fault_injector::lose_state(const node_parts& on, const permit_loss& how, Lose&& lose) {
  const vtime_ns now = sched_.now_ns();
  const std::string& key = on.server->holders_key();
  on.server->settle_expiry();
  std::vector<redis::sorted_set::entry> before;
  if (const redis::sorted_set* set = on.node->peek_set(key, on.node->server_now_us(now)))
    before.assign(set->entries().begin(), set->entries().end());
  lose();
  const redis::sorted_set* after = on.node->peek_set(key, on.node->server_now_us(now));
  for (const redis::sorted_set::entry& e : before) {
    const std::optional<double> kept = after == nullptr ? std::nullopt : after->score(e.member);
    if (!kept) {
      on.server->permit_left(e.member, how, false);
    } else if (*kept < e.score) {
      permit_rollback rb;
      rb.by = how.by;
      rb.at_ns = now;
      rb.aof = how.aof;
      rb.replication_lag_ns = how.replication_lag_ns;
      rb.kept_score = *kept;
      rb.lost_score = e.score;
      on.server->permit_rolled_back(e.member, rb);
    }
  }
}

void fault_injector::schedule(std::span<const scenario::fault_spec> schedule) {
  for (const auto& f : schedule) {
    const scenario::fault_spec* fp = &f;
    sched_.schedule_at(f.at_ns, [this, fp] { apply(*fp); });
  }
}

void fault_injector::apply(const scenario::fault_spec& f) {
  using fk = scenario::fault_kind;
  using scenario::node_ref;
  const vtime_ns now = sched_.now_ns();
  const vtime_ns dur = f.duration_ns.value_or(0);
  const char* kind = scenario::fault_kind_names[static_cast<std::size_t>(f.kind)];
  std::string what = kind;
  if (f.target) {
    what += ' ';
    what += scenario::to_string(*f.target);
  }
  facts_.publish(fact::fault_began{f, what});
  const bool on_worker = f.target && f.target->k == node_ref::kind::worker;
  const bool on_redis = f.target && f.target->k == node_ref::kind::redis;
  ADMIT_ASSERT(f.node >= 0 && static_cast<std::size_t>(f.node) < nodes_.size(), "a fault names one of the world's nodes");
  const node_parts& at = nodes_[static_cast<std::size_t>(f.node)];
  redis_node& node = *at.node;
  switch (f.kind) {
    case fk::crash:
      if (on_worker) crash(static_cast<std::size_t>(f.target->worker), f);
      break;
    case fk::pause:
      if (on_worker) {
        // Pauses of one target overlap into their union: a pause that starts inside another extends it,
        // never shortens it, and the pause began when the first one did.
        worker_state& w = fleet_[static_cast<std::size_t>(f.target->worker)];
        if (now >= w.paused_until) w.paused_from_ns = now;
        w.paused_until = std::max(w.paused_until, now + dur);
        ADMIT_ASSERT(w.paused_from_ns >= 0 && w.paused_from_ns <= now && w.paused_until >= now + dur,
                     "a worker's pause began by now and lasts at least as long as the newest");
      }
      else if (on_redis)
        node.pause_until(std::max(node.paused_until(), now + dur));
      break;
    case fk::partition: {
      // A cut that involves Redis is of one node's links; any other (a worker cut off) is of every node's.
      const bool of_redis = on_redis || (f.between && (f.between->first.k == node_ref::kind::redis ||
                                                       f.between->second.k == node_ref::kind::redis));
      for (std::size_t n = 0; n < nodes_.size(); ++n) {
        if (of_redis && n != static_cast<std::size_t>(f.node)) continue;
        network& net = *nodes_[n].net;
        if (f.between)
          net.cut(scenario::to_string(f.between->first), scenario::to_string(f.between->second), now + dur);
        else if (f.target)
          net.cut(scenario::to_string(*f.target), "", now + dur);
      }
      break;
    }
    case fk::clock_step:
      if (on_worker)
        fleet_[static_cast<std::size_t>(f.target->worker)].clock.step_ns += f.step_ns;
      else if (on_redis)
        node.step_clock(f.step_ns);
      break;
    case fk::redis_restart: {
      permit_loss how;
      how.by = permit_loss::how::restart;
      how.at_ns = now;
      how.aof = f.persist == scenario::persistence::aof_everysec;
      lose_state(at, how, [&] { node.restart(f.persist, now, dur); });
      if (nodes_.size() == 1) fleet_.lost_all_permits();  // with several, the majority count says who lost it
      rerun_setup(at, now + dur);
      break;
    }
    case fk::redis_failover: {
      permit_loss how;
      how.by = permit_loss::how::failover;
      how.at_ns = now;
      how.replication_lag_ns = f.replication_lag_ns;
      lose_state(at, how, [&] { node.failover(f.replication_lag_ns, now, dur); });
      if (nodes_.size() == 1) fleet_.lost_all_permits();
      rerun_setup(at, now + dur);
      break;
    }
    case fk::client_timeout_burst:
      portal_.burst(now + dur, f.client_timeout_ns);
      break;
  }
}

void fault_injector::rerun_setup(const node_parts& on, sim::vtime_ns back_at) {
  if (!on.server->reruns_setup()) return;
  // As the node comes back (a later fault may take it down again first: the set-up runs once it is up).
  sched_.schedule_at(back_at, [this, server = on.server, node = on.node] {
    if (node->down(sched_.now_ns())) return;  // down again: that fault's own return runs it
    (void)server->run_setup(true);
  });
}

void fault_injector::crash_process(std::size_t wi, sim::vtime_ns restart_after_ns) {
  ADMIT_ASSERT(restart_after_ns > 0, "a dead process comes back after a while");
  scenario::fault_spec f;
  f.kind = scenario::fault_kind::crash;
  f.duration_ns = restart_after_ns;
  crash(wi, f);
}

void fault_injector::crash(std::size_t wi, const scenario::fault_spec& f) {
  if (!fleet_[wi].alive) return;
  const worker_state& w = fleet_[wi];
  const std::uint64_t item = w.current && w.holding ? w.current->number : 0;  // the item it held a permit for
  portal_.worker_crashed(wi, sched_.now_ns());  // the connection it had open runs on without it
  const bool held = fleet_.crash(wi, [this](const work_item& it) { items_.end(it, "crashed", sched_.now_ns()); });
  ADMIT_ASSERT(item == 0 || held, "a worker at work on an item under a permit held it as it crashed");
  facts_.publish(fact::worker_crashed{wi, held, item});
  if (f.duration_ns)
    sched_.schedule_after(*f.duration_ns, [this, wi] {
      facts_.publish(fact::worker_restarted{wi});  // first: its next generation may start at once
      fleet_.restart(wi);
    });
}

}  // namespace admit::world::lease
