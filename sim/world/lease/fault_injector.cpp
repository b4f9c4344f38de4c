#include "sim/world/lease/fault_injector.hpp"

#include <string>
#include <vector>

namespace admit::world::lease {

template <class Lose>
void fault_injector::lose_state(const permit_loss& how, Lose&& lose) {
  const vtime_ns now = sched_.now_ns();
  const std::string& key = server_.holders_key();
  std::vector<std::string> before;
  if (const redis::sorted_set* set = node_.peek_set(key, node_.server_now_us(now)))
    for (const redis::sorted_set::entry& e : set->entries()) before.push_back(e.member);
  lose();
  const redis::sorted_set* after = node_.peek_set(key, node_.server_now_us(now));
  for (const std::string& member : before)
    if (after == nullptr || !after->score(member)) server_.permit_left(member, how, false);
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
  monitors_.trace("fault", trace_text().word(what), 0, 0);
  if (tl_.recording()) {
    fault_window fw;
    fw.kind = kind;
    fw.target = f.target    ? scenario::to_string(*f.target)
                : f.between ? scenario::to_string(f.between->first) + "|" + scenario::to_string(f.between->second)
                            : std::string();
    fw.start_ns = now;
    fw.end_ns = now + (f.kind == fk::crash && !f.duration_ns ? 0 : dur);
    tl_.add_window(std::move(fw));
  }
  const bool on_worker = f.target && f.target->k == node_ref::kind::worker;
  const bool on_redis = f.target && f.target->k == node_ref::kind::redis;
  switch (f.kind) {
    case fk::crash:
      if (on_worker) crash(static_cast<std::size_t>(f.target->worker), f);
      break;
    case fk::pause:
      if (on_worker) {
        worker_state& w = fleet_[static_cast<std::size_t>(f.target->worker)];
        w.paused_from_ns = now;
        w.paused_until = now + dur;
      }
      else if (on_redis)
        node_.pause_until(now + dur);
      break;
    case fk::partition:
      if (f.between)
        net_.cut(scenario::to_string(f.between->first), scenario::to_string(f.between->second), now + dur);
      else if (f.target)
        net_.cut(scenario::to_string(*f.target), "", now + dur);
      break;
    case fk::clock_step:
      if (on_worker)
        fleet_[static_cast<std::size_t>(f.target->worker)].clock.step_ns += f.step_ns;
      else if (on_redis)
        node_.step_clock(f.step_ns);
      break;
    case fk::redis_restart: {
      permit_loss how;
      how.by = permit_loss::how::restart;
      how.at_ns = now;
      how.aof = f.persist == scenario::persistence::aof_everysec;
      lose_state(how, [&] { node_.restart(f.persist, now, dur); });
      fleet_.lost_all_permits();
      break;
    }
    case fk::redis_failover: {
      permit_loss how;
      how.by = permit_loss::how::failover;
      how.at_ns = now;
      how.replication_lag_ns = f.replication_lag_ns;
      lose_state(how, [&] { node_.failover(f.replication_lag_ns, now, dur); });
      fleet_.lost_all_permits();
      break;
    }
    case fk::client_timeout_burst:
      portal_.burst(now + dur, f.client_timeout_ns);
      break;
  }
}

void fault_injector::crash(std::size_t wi, const scenario::fault_spec& f) {
  if (!fleet_[wi].alive) return;
  portal_.worker_crashed(wi, sched_.now_ns());  // the connection it had open runs on without it
  const bool held = fleet_.crash(wi, [this](const work_item& item) { items_.end(item, "crashed", sched_.now_ns()); });
  if (held) monitors_.hit(lp_crash_while_holding);
  if (f.duration_ns) sched_.schedule_after(*f.duration_ns, [this, wi] { fleet_.restart(wi); });
}

}  // namespace admit::world::lease
