#include "sim/world/lease/lease_causes.hpp"

#include <algorithm>
#include <utility>

#include "gate/admit_assert.hpp"
#include "sim/check/causes.hpp"
#include "sim/world/cause_text.hpp"

namespace admit::world::lease {

namespace {

using check::cause;
using check::cause_kind;

std::string span(vtime_ns ns) { return span_text(ns); }

// A reading of a clock in ms since the Unix epoch, as a time of day on the
// world's epoch: "00:00:05", "00:00:05.250" ("-00:00:03" before it).
std::string clock_ms(std::int64_t unix_ms) {
  std::int64_t d = unix_ms - lease_world_epoch_ms;
  std::string out;
  if (d < 0) {
    out = "-";
    d = -d;
  }
  const auto two = [&out](std::int64_t v) {
    out.push_back(static_cast<char>('0' + v / 10 % 10));
    out.push_back(static_cast<char>('0' + v % 10));
  };
  const std::int64_t h = d / 3'600'000;
  if (h >= 100) out += std::to_string(h);
  else two(h);
  out.push_back(':');
  two(d / 60'000 % 60);
  out.push_back(':');
  two(d / 1000 % 60);
  ADMIT_ASSERT(out.size() >= 8, "a time of day has hours, minutes and seconds");
  if (const std::int64_t ms = d % 1000; ms != 0) {
    out.push_back('.');
    out.push_back(static_cast<char>('0' + ms / 100));
    two(ms % 100);
  }
  return out;
}

// A virtual instant as true time of day on the same epoch.
std::string at(vtime_ns t) { return clock_ms(lease_world_epoch_ms + t / sim::ms); }

// "20s ahead", "12s behind", "right".
std::string off(vtime_ns ns) {
  if (ns == 0) return "right";
  return ns > 0 ? span(ns) + " ahead" : span(-ns) + " behind";
}

void add(std::vector<cause>& out, cause c) {
  ADMIT_ASSERT(!c.kind.empty() && !c.detail.empty(), "a cause is a kind of the table and a sentence");
  for (const cause& o : out)
    if (o.detail == c.detail) return;
  out.push_back(std::move(c));
}

}  // namespace

// --- what the causes keep of the facts ------------------------------------------------

lease_causes::lease_causes(sim::scheduler& sched, const scenario::scenario& sc, bool protocol,
                           std::optional<vtime_ns> renew_every_ns, const redis_node& node, const server_side& server)
    : sched_(sched), sc_(sc), protocol_(protocol), renew_every_ns_(renew_every_ns), node_(node), server_(server),
      limit_(sc.gates.front().lease.limit), lease_ns_(sc.gates.front().lease.lease_ns),
      cap_(sc.service.portal_cap.value_or(limit_)), fates_(static_cast<std::size_t>(sc.fleet.workers)),
      on_(fates_.size()),
      refused_(sc.service.over_cap == scenario::service_spec::over_cap_policy::serve ? 0 : fates_.size()) {
  ADMIT_ASSERT(limit_ >= 1 && lease_ns_ > 0 && cap_ >= 1, "the loader refuses a limit, a lease and a cap of 0");
  ADMIT_ASSERT(!fates_.empty(), "the loader refuses an empty fleet");
  ADMIT_ASSERT(!renew_every_ns || *renew_every_ns > 0, "a renewal interval is positive");
  for (std::size_t wi = 0; wi < fates_.size(); ++wi) fates_[wi].clock.spec = sc.fleet.clock_of(static_cast<std::int64_t>(wi));
}

void lease_causes::on(const fact::reply_lost& f) {
  fates_[f.worker].reply_lost_ns = sched_.now_ns();
  fates_[f.worker].reply_lost_redis_down = f.redis_down;
}

void lease_causes::on(const fact::ran_late& f) { fates_[f.worker].ran_late_ns = sched_.now_ns(); }

void lease_causes::on(const fact::worker_crashed& f) {
  worker_fate& w = fates_[f.worker];
  ADMIT_ASSERT(w.alive, "a worker crashes while alive");
  ADMIT_ASSERT(f.item == 0 || (w.on_item && w.permit.number == f.item), "the item it held a permit for is the one it was on");
  w.crashed_ns = sched_.now_ns();
  w.crashed_item = f.item;
  w.alive = false;
  w.on_item = false;  // its item ended with it
}

void lease_causes::on(const fact::worker_restarted& f) {
  worker_fate& w = fates_[f.worker];
  ADMIT_ASSERT(!w.alive && !w.on_item, "only a crashed worker restarts, on no item");
  w.alive = true;
  w.exited = w.drained = w.retired = false;  // its next generation starts afresh
}

void lease_causes::on(const fact::worker_drained& f) { fates_[f.worker].drained = true; }

void lease_causes::on(const fact::release_failed& f) { fates_[f.worker].release_failed_item = f.number; }

void lease_causes::on(const fact::gave_up& f) {
  if (!f.requeued) return;
  fates_[f.worker].exited_ns = sched_.now_ns();
  fates_[f.worker].exited = true;
}

void lease_causes::on(const fact::renewal_lost& f) {
  if (f.stops_new_work) fates_[f.worker].retired = true;
}

void lease_causes::on(const fact::fault_began& f) {
  // A step of a worker's clock (a step of the server's is the node's: its offset is read from the node).
  const scenario::fault_spec& s = f.spec;
  if (s.kind != scenario::fault_kind::clock_step || !s.target || s.target->k != scenario::node_ref::kind::worker) return;
  const auto wi = static_cast<std::size_t>(s.target->worker);
  ADMIT_ASSERT(wi < workers(), "the loader refuses a worker the fleet does not have");
  fates_[wi].clock.step_ns += s.step_ns;
}

void lease_causes::on(const fact::acquiring& f) {
  worker_fate& w = fates_[f.worker];
  ADMIT_ASSERT(w.alive && !w.on_item, "a live worker starts on an item after it is done with the last");
  w.on_item = true;
  // Field by field: most items lose nothing, and the loss's storage is only reset.
  permit_record& p = w.permit;
  p.number = f.number;
  p.service_ns = f.service_ns;
  p.granted_ns = p.renewed_ns = p.client_left_ns = p.crashed_ns = -1;
  p.server_offset_ns = p.clock_step_ns = 0;
  p.counted = -1;
  p.loss.reset();
  p.rollback.reset();
  ADMIT_ASSERT(names(f.token, f.worker, f.number), "an item's token names its worker and number");
}

void lease_causes::on(const fact::left_item& f) {
  ADMIT_ASSERT(current(f.worker, f.number) != nullptr, "a worker leaves the item it is on");
  fates_[f.worker].on_item = false;
}

void lease_causes::on(const fact::permit_granted& f) {
  worker_fate& w = fates_[f.worker];
  ADMIT_ASSERT(on_token(f.worker, f.token) && w.permit.granted_ns < 0, "the first grant of the item the worker is on");
  w.permit.granted_ns = sched_.now_ns();
  w.permit.server_offset_ns = f.server_offset_ns;
  w.permit.clock_step_ns = f.clock_step_ns;
  ADMIT_ASSERT(f.clock_step_ns == w.clock.step_ns, "the worker's clock steps as the faults told them");
}

void lease_causes::on(const fact::permit_renewed& f) {
  ADMIT_ASSERT(on_token(f.worker, f.token), "a worker holds only the permit of the item it is on");
  fates_[f.worker].permit.renewed_ns = sched_.now_ns();
}

void lease_causes::on(const fact::permit_counted& f) { fates_[f.worker].permit.counted = f.members; }

void lease_causes::on(const fact::permit_lost& f) {
  if (f.current) {
    permit_record* p = current(f.worker, f.number);
    ADMIT_ASSERT(p != nullptr, "a permit lost while its worker is on its item is that item's");
    permit_loss& loss = p->loss.emplace(f.how);
    if (f.paused_from_ns >= 0) {
      loss.paused_from_ns = f.paused_from_ns;
      loss.paused_until_ns = f.paused_until_ns;
    }
  }
  // A connection its worker left open keeps why too.
  for (portal_connection& c : left_)
    if (c.number == f.number) c.left.loss = f.how;
}

void lease_causes::on(const fact::permit_rolled_back& f) {
  ADMIT_ASSERT(on_token(f.worker, f.token), "a worker holds only the permit of the item it is on");
  fates_[f.worker].permit.rollback = f.how;
}

void lease_causes::agrees(const fact::portal_counts& at) const {
  ADMIT_ASSERT(at.cap == cap_ && at.open == open_ && at.attempted == open_ + refused_open_,
               "the connections the causes keep are the portal's");
  ADMIT_ASSERT(open_ >= static_cast<std::int64_t>(left_.size()) && refused_open_ >= 0, "the counts are whole");
}

void lease_causes::on(const fact::portal_opened& f) {
  const std::size_t wi = f.at.worker;
  const vtime_ns now = sched_.now_ns();
  if (f.under_permit) {
    ADMIT_ASSERT(!on_[wi].open && current(wi, f.number) != nullptr, "a worker opens one connection, for its item");
    // Field by field: its `left` copy is read only once the worker leaves it (connection_left).
    portal_connection& c = on_[wi];
    c.open = true;
    c.worker = wi;
    c.number = f.number;
    c.opened_ns = now;
    c.attached = &fates_[wi].permit;
    c.under_permit = true;
  } else {
    // Sent without a permit (fail_open): no worker's record covers it.
    portal_connection& c = left_.emplace_back();
    c.open = true;
    c.worker = wi;
    c.number = f.number;
    c.opened_ns = now;
    c.under_permit = false;
    c.left.number = f.number;
    c.left.service_ns = f.service_ns;
  }
  ++open_;
  agrees(f.at);
}

void lease_causes::on(const fact::connection_left& f) {
  portal_connection& c = on_[f.worker];
  ADMIT_ASSERT(c.open && c.number == f.number && c.attached != nullptr, "a worker leaves the connection it is on");
  portal_connection& l = left_.emplace_back(c);
  l.left = *c.attached;
  l.attached = nullptr;
  if (f.crashed_ns >= 0) l.left.crashed_ns = f.crashed_ns;
  c.open = false;
  c.attached = nullptr;
}

void lease_causes::on(const fact::client_left& f) {
  if (!f.under_permit) return;
  if (permit_record* p = current(f.worker, f.number)) p->client_left_ns = sched_.now_ns();  // its connection may stay open
}

void lease_causes::on(const fact::portal_closed& f) {
  portal_connection& c = on_[f.at.worker];
  if (c.open && c.number == f.number) {
    c.open = false;
    c.attached = nullptr;
  } else {
    const auto it = std::find_if(left_.begin(), left_.end(), [&](const portal_connection& l) { return l.number == f.number; });
    ADMIT_ASSERT(it != left_.end(), "a connection closes once, while open");
    left_.erase(it);  // keeps the order they were left in
  }
  --open_;
  agrees(f.at);
}

void lease_causes::on(const fact::portal_refused& f) {
  const std::size_t wi = f.at.worker;
  ADMIT_ASSERT(wi < refused_.size(), "refused attempts are kept under reject_429");
  refused_attempt& r = refused_[wi];
  ADMIT_ASSERT(!r.live, "a worker's refused attempt is over before its next call");
  r.live = true;
  r.number = f.number;
  r.under_permit = f.under_permit;
  r.permit = f.under_permit ? fates_[wi].permit : permit_record{};
  ++refused_open_;
  agrees(f.at);
  // What fills the portal now, kept without its sentences (made only if a violation asks). Emptied
  // first: the attempt being refused is among those read.
  r.filled.uncovered.clear();
  r.filled.covered = 0;
  refusal(wi, r.filled);
}

void lease_causes::on(const fact::portal_refusal_over& f) {
  refused_attempt& r = refused_[f.at.worker];
  ADMIT_ASSERT(r.live && refused_open_ > 0, "a live refused attempt stops counting once");
  r.live = false;
  --refused_open_;
  agrees(f.at);
}

void lease_causes::on(const fact::item_queued& f) {
  queued_.push_back(queued_item{f.number, f.arrived_ns});
  ADMIT_ASSERT(queued_.size() == f.waiting, "the causes' queue is the queue");
}

void lease_causes::on(const fact::item_taken& f) {
  ADMIT_ASSERT(!queued_.empty() && queued_.front().number == f.number, "an item is taken from the queue's head");
  queued_.pop_front();
  ADMIT_ASSERT(queued_.size() == f.waiting, "the causes' queue is the queue");
}

const redis::sorted_set* lease_causes::holders() const {
  return node_.peek_set(server_.holders_key(), node_.server_now_us(sched_.now_ns()));
}

bool lease_causes::in_set(const redis::sorted_set* set, std::string_view token) const {
  const bool on_first = set != nullptr && set->score(token).has_value();
  if (more_nodes_.empty()) return on_first;
  std::size_t holding = on_first ? 1 : 0;
  for (const redis_node* n : more_nodes_) {
    const redis::sorted_set* s = n->peek_set(server_.holders_key(), n->server_now_us(sched_.now_ns()));
    if (s != nullptr && s->score(token).has_value()) ++holding;
  }
  ADMIT_ASSERT(holding <= more_nodes_.size() + 1, "a token is held on at most every node");
  return holding >= (more_nodes_.size() + 1) / 2 + 1;
}

cause lease_causes::lost(std::string_view token, const permit_record& record, const permit_loss& loss) const {
  ADMIT_ASSERT(!token.empty() && loss.at_ns >= 0 && loss.at_ns <= sched_.now_ns(),
               "a permit's loss is recorded when it happens, before the violation it explains");
  const std::string permit = "permit " + std::string(token);
  const std::string granted_ago = record.granted_ns >= 0 ? span(loss.at_ns - record.granted_ns) : std::string("?");
  switch (loss.by) {
    case permit_loss::how::restart:
      if (loss.node >= 0 && !loss.aof)
        return {cause_kind("quorum_restart_forgot"),
                permit + " forgotten by Redis node " + std::to_string(loss.node) + "'s restart without persistence at " +
                    at(loss.at_ns) + " (granted " + granted_ago +
                    " before): fewer than a majority of the nodes held it then, and the restarted node could grant "
                    "its slot again to a second majority"};
      if (!loss.aof)
        return {cause_kind("restart_forgot"), permit + " forgotten by a Redis restart without persistence at " +
                                                  at(loss.at_ns) + " (granted " + granted_ago + " before)"};
      return {cause_kind("restart_lost_last_second"),
              permit + " forgotten by a Redis restart at " + at(loss.at_ns) + ": granted " + granted_ago +
                  " before, after the last second the AOF had written"};
    case permit_loss::how::failover:
      return {cause_kind("failover_unreplicated"), permit + " lost in a failover" +
                                                       (loss.node >= 0 ? " of Redis node " + std::to_string(loss.node) : std::string()) +
                                                       " at " + at(loss.at_ns) + ": granted " +
                                                       granted_ago + " before, not yet replicated (the replica lagged " +
                                                       span(loss.replication_lag_ns) + ")"};
    case permit_loss::how::setup:
      return {cause_kind("setup_removed"), permit + " removed at " + at(loss.at_ns) +
                                               " by the protocol's set-up, run again as the node came back (granted " +
                                               granted_ago + " before)"};
    case permit_loss::how::reaped:
    case permit_loss::how::expired_with_key:
      break;
  }
  const std::string how = loss.by == permit_loss::how::reaped
                              ? "reaped by worker " + std::to_string(loss.reaper)
                              : std::string("gone with the gate key's expiry");
  const vtime_ns start = record.lease_start_ns();
  if (start < 0)
    return {cause_kind("unexplained"), permit + " " + how + " at " + at(loss.at_ns) + ", before the world saw it granted"};
  const vtime_ns into = loss.at_ns - start;
  const std::string into_lease = span(into) + " into its " + span(lease_ns_) + " lease";
  if (into < lease_ns_ && record.rollback && record.rollback->at_ns >= start && record.rollback->at_ns <= loss.at_ns) {
    // Early by the last renewal, which a restart or failover took back: the node's score was the older one.
    const permit_rollback& rb = *record.rollback;
    const std::string renewal = "its renewal at " + at(start);
    if (rb.by == permit_loss::how::failover)
      return {cause_kind("failover_unreplicated"),
              permit + " " + how + " " + span(into) + " after " + renewal + ": a failover at " + at(rb.at_ns) +
                  " promoted a replica that had not received that renewal yet (it lagged " +
                  span(rb.replication_lag_ns) + ") and still held the permit's older score"};
    if (rb.aof)
      return {cause_kind("restart_lost_last_second"),
              permit + " " + how + " " + span(into) + " after " + renewal + ": a Redis restart at " + at(rb.at_ns) +
                  " came back from an AOF written before that renewal, with the permit's older score"};
  }
  if (into < lease_ns_) {
    // Early: a clock said the lease was over before it was.
    if (loss.by == permit_loss::how::reaped && loss.reaper_clock) {
      const auto named = fleet::parse_token(token, workers());
      const vtime_ns victim_off =
          named ? fates_[named->first].clock.offset_ns(record.granted_ns, record.clock_step_ns) : 0;
      if (loss.reaper_offset_ns != victim_off) {
        std::string s = permit;
        if (victim_off != 0 && named)
          s += ", scored by worker " + std::to_string(named->first) + "'s clock " + off(victim_off) + ",";
        s += " reaped by worker " + std::to_string(loss.reaper);
        if (loss.reaper_offset_ns != 0) s += ", whose clock is " + off(loss.reaper_offset_ns);
        if (loss.scored) s += ": score " + clock_ms(loss.score_ms) + ", reaped at its now " + clock_ms(loss.now_ms);
        s += " (" + into_lease + ")";
        return {cause_kind("caller_clock_skew"), std::move(s)};
      }
      // The same clocks: the score itself was old, the now its acquire (or renewal) carried from before a
      // hold-up, set when the call ran.
      if (loss.scored) {
        const std::int64_t at_start_ms = lease_world_epoch_ms + (start + victim_off) / sim::ms;
        const std::int64_t aged_ms = at_start_ms - loss.score_ms;
        const bool renewal = record.renewed_ns > record.granted_ns;
        if (aged_ms > 0 && into + aged_ms * sim::ms >= lease_ns_)
          return {cause_kind("stale_caller_now"),
                  permit + " was scored " + clock_ms(loss.score_ms) + " by the now its " +
                      (renewal ? "renewal" : "acquire") + " carried, but the server " +
                      (renewal ? "ran that renewal " : "granted it ") + span(aged_ms * sim::ms) + " later, at " + at(start) +
                      " (the call was held up on its way: a paused Redis, a slow link); worker " +
                      std::to_string(loss.reaper) + "'s acquire reaped it at its now " + clock_ms(loss.now_ms) + " (" +
                      into_lease + ")"};
      }
    }
    const vtime_ns jump = loss.server_offset_ns - record.server_offset_ns;
    if (jump > 0)
      return {cause_kind("server_clock_jump"), permit + " " + how + " " + into_lease + ": the server's clock jumped " +
                                                   span(jump) + " ahead since it was granted"};
    return {cause_kind("unexplained"), permit + " " + how + " " + into_lease + ", and no clock moved"};
  }
  const std::optional<vtime_ns>& every = renew_every_ns_;
  if (every && record.crashed_ns >= 0 && record.crashed_ns <= loss.at_ns)
    return {cause_kind("crashed_holder"),
            permit + " expired " + span(loss.at_ns - record.crashed_ns) + " after its holder crashed at " +
                at(record.crashed_ns) + " with its " + span(record.service_ns) +
                " request still at the portal: no one renews a dead holder's lease"};
  if (every) {
    const std::string lease = span(lease_ns_);
    std::string s = permit + " expired " + span(into) + " after its " +
                    (record.renewed_ns > record.granted_ns ? "last renewal" : "grant") + ", on " + article_for(lease) +
                    " " + lease + " lease renewed every " + span(*every);
    if (loss.paused_from_ns >= 0 && loss.paused_until_ns > start && loss.paused_from_ns < loss.at_ns)
      s += ": its worker was paused " + span(loss.paused_until_ns - loss.paused_from_ns) + " from " +
           at(loss.paused_from_ns);
    return {cause_kind("renewal_missed"), std::move(s)};
  }
  const std::string request = span(record.service_ns), lease = span(lease_ns_);
  if (record.service_ns < lease_ns_ && loss.paused_from_ns >= 0 && loss.paused_from_ns < loss.at_ns &&
      loss.paused_until_ns > start)
    return {cause_kind("holder_paused"),
            permit + " " + how + " " + span(into) + " after its grant at " + at(start) + ", and its worker was paused " +
                span(loss.paused_until_ns - loss.paused_from_ns) + " from " + at(loss.paused_from_ns) +
                ": the pause, not its " + request + " request, outlasted the " + lease + " lease (no renewal)"};
  return {cause_kind("lease_outlived"), permit + " expired: " + article_for(request) + " " + request + " request on " +
                                            article_for(lease) + " " + lease + " lease, no renewal"};
}

cause lease_causes::uncovered(std::size_t wi, std::string_view token, const permit_record& record, vtime_ns opened_ns,
                              bool under_permit) const {
  ADMIT_ASSERT(wi < workers() && opened_ns >= 0 && opened_ns <= sched_.now_ns(),
               "a connection of a worker of the fleet, opened before now");
  if (!under_permit)
    return {cause_kind("failed_open"), "worker " + std::to_string(wi) + " could not reach Redis and sent item " +
                                           std::to_string(record.number) + " to the portal without a permit"};
  if (record.loss) return lost(token, record, *record.loss);
  if (record.client_left_ns >= 0)
    return {cause_kind("client_timeout_release"),
            "permit " + std::string(token) + " released after a client timeout while the connection stayed open: the client gave up after " +
                span(record.client_left_ns - opened_ns) + " of a " + span(record.service_ns) + " request"};
  return {cause_kind("unexplained"),
          "permit " + std::string(token) + " is not in the set, and the world did not see it leave while its request ran"};
}

cause lease_causes::too_many_covered(std::int64_t covered) const {
  ADMIT_ASSERT(covered > cap_, "asked only when the covered connections are more than the cap");
  if (limit_ > cap_)
    return {cause_kind("limit_above_cap"), "the lease limit " + std::to_string(limit_) + " is above the portal's cap " +
                                               std::to_string(cap_)};
  if (!more_nodes_.empty() && limit_ > 1) {
    // Every node within its limit, yet more tokens than the limit each on a majority: the sets diverged.
    const std::size_t nodes = more_nodes_.size() + 1;
    const std::size_t majority = nodes / 2 + 1;
    return {cause_kind("quorum_spread"),
            std::to_string(covered) + " connections at the portal hold permits granted by a majority of the " +
                std::to_string(nodes) + " nodes, above its cap " + std::to_string(cap_) +
                ": the nodes' sets differ, and a counting semaphore over majorities admits up to " +
                std::to_string(nodes * static_cast<std::size_t>(limit_) / majority) + " holders with each node at its limit " +
                std::to_string(limit_)};
  }
  const std::string s = std::to_string(covered) + " connections at the portal hold permits in the set, above its cap " +
                        std::to_string(cap_) + " though the limit is " + std::to_string(limit_) +
                        ": the set held more permits than its limit";
  if (sc_.gates.front().world_mut == scenario::world_mutation::check_then_add)
    return {cause_kind("check_then_add"), s + " (a non-atomic check-then-add)"};
  if (protocol_) return {cause_kind("protocol_over_limit"), s + " (the protocol's scripts let it)"};
  return {cause_kind("unexplained"), s};
}

void lease_causes::portal(std::vector<cause>& out) {
  const redis::sorted_set* set = holders();
  std::int64_t covered = 0;
  const auto one = [&](const portal_connection& c) {
    const std::string token = fleet::token_of(c.worker, c.number);
    if (c.under_permit && in_set(set, token)) {
      ++covered;
      return;
    }
    add(out, uncovered(c.worker, token, c.permit(), c.opened_ns, c.under_permit));
  };
  for (const portal_connection& c : on_)
    if (c.open) one(c);
  for (const portal_connection& c : left_) one(c);
  for (std::size_t wi = 0; wi < refused_.size(); ++wi) {
    const refused_attempt& r = refused_[wi];
    if (!r.live) continue;
    const std::string token = fleet::token_of(wi, r.number);
    if (in_set(set, token)) {
      ++covered;  // its worker still holds the permit it was refused under (its release is on its way)
      continue;
    }
    const worker_fate& w = fates_[wi];
    if (w.on_item && w.permit.number == r.number && w.permit.loss) {
      add(out, lost(token, w.permit, *w.permit.loss));
      continue;
    }
    // Its worker moved on, but the permit the attempt was made under had already left the set then.
    if (r.under_permit && r.permit.loss) {
      add(out, lost(token, r.permit, *r.permit.loss));
      continue;
    }
    // Its worker released the permit after the 429: what filled the portal then is why.
    for (const portal_connection& c : r.filled.uncovered)
      add(out, uncovered(c.worker, fleet::token_of(c.worker, c.number), c.left, c.opened_ns, c.under_permit));
    if (r.filled.covered > cap_) add(out, too_many_covered(r.filled.covered));
  }
  if (covered > cap_) add(out, too_many_covered(covered));
  ADMIT_ASSERT(covered >= 0 && covered <= open_ + refused_open_, "the covered connections are among those asked for");
}

void lease_causes::refusal(std::size_t refused_wi, refusal_snapshot& out) const {
  ADMIT_ASSERT(out.uncovered.empty() && out.covered == 0, "a refusal's snapshot starts empty");
  const redis::sorted_set* set = holders();
  const auto keep = [&](const portal_connection& c) {
    portal_connection& k = out.uncovered.emplace_back(c);
    if (c.attached != nullptr) k.left = *c.attached;
    k.attached = nullptr;
  };
  const auto one = [&](const portal_connection& c) {
    if (c.under_permit && in_set(set, fleet::token_of(c.worker, c.number))) ++out.covered;
    else keep(c);
  };
  for (const portal_connection& c : on_)
    if (c.open) one(c);
  for (const portal_connection& c : left_) one(c);
  const bool open_ones = !out.uncovered.empty();
  for (std::size_t wi = 0; wi < refused_.size(); ++wi) {
    const refused_attempt& r = refused_[wi];
    if (!r.live) continue;
    if (in_set(set, fleet::token_of(wi, r.number))) {
      ++out.covered;
      continue;
    }
    // Only when the open connections show nothing, what the attempts refused
    // before it inherited (so that old causes do not ride a long run of
    // refusals); never from the attempt being refused, whose snapshot this is.
    if (open_ones || wi == refused_wi) continue;
    for (const portal_connection& c : r.filled.uncovered)
      if (out.uncovered.size() < check::max_causes_kept) keep(c);
  }
  ADMIT_ASSERT(out.covered >= 0 && out.covered <= open_ + refused_open_, "the covered connections are among those asked for");
  for (const portal_connection& c : out.uncovered)
    ADMIT_ASSERT(c.attached == nullptr, "a snapshot keeps copies of the permits' records, not the workers' own");
}

void lease_causes::gate(std::vector<cause>& out, std::size_t wi, redis::script_op op, std::string_view token,
                        std::int64_t members, bool split_add) {
  ADMIT_ASSERT(wi < workers() && members > limit_, "asked only when a worker's step left more members than the limit");
  const std::string limit = std::to_string(limit_);
  if (sc_.gates.front().world_mut == scenario::world_mutation::check_then_add) {
    if (split_add) {
      const std::int64_t counted = fates_[wi].permit.counted;
      add(out, {cause_kind("check_then_add"),
                "worker " + std::to_string(wi) + " counted " + count_text(counted, "live permit", "live permits") +
                    ", below the limit " + limit + ", then added " + std::string(token) +
                    " a round trip later, after others had added theirs: " +
                    count_text(members, "live permit", "live permits") + " (a non-atomic check-then-add)"});
    } else {
      add(out, {cause_kind("check_then_add"), "the set still held " + std::to_string(members) +
                                                  " live permits, above the limit " + limit +
                                                  ", from adds that came after their counts (a non-atomic check-then-add)"});
    }
    return;
  }
  if (protocol_) {
    add(out, {cause_kind("protocol_over_limit"), "the protocol's " + std::string(redis::script_op_name(op)) + " for " +
                                                     std::string(token) + " (worker " + std::to_string(wi) + ") left " +
                                                     std::to_string(members) + " live permits, above the limit " + limit});
    return;
  }
}

std::string lease_causes::regrant(std::size_t wi, std::string_view token) {
  ADMIT_ASSERT(wi < workers() && !token.empty(), "a token of a worker of the fleet");
  const worker_fate& fate = fates_[wi];
  const vtime_ns first = on_token(wi, token) ? fate.permit.granted_ns : vtime_ns{-1};
  std::string why;
  if (first >= 0 && fate.ran_late_ns == first)
    why = "the script ran after the client's " + span(redis_call_timeout_ns) + " socket timeout";
  else if (first >= 0 && fate.reply_lost_ns >= first)
    why = fate.reply_lost_redis_down ? "its reply was lost as Redis went down"
                                     : "its reply was lost on the cut link to worker " + std::to_string(wi);
  else
    why = "its reply never reached the client";
  std::string s = "token " + std::string(token);
  s += first >= 0 ? " was granted at " + at(first) + ", but " + why : " was granted, but " + why;
  s += "; the client retried under the same token and was granted again at " + at(sched_.now_ns());
  ADMIT_ASSERT(first < 0 || first <= sched_.now_ns(), "the first grant came before the second");
  return s;
}

void lease_causes::survivor(std::vector<cause>& out, std::size_t wi, std::string_view member, const acquire_now& now_read) {
  ADMIT_ASSERT(wi < workers(), "an acquire of a worker of the fleet");  // a member may be "" (a script ZADDs any string)
  const vtime_ns now = sched_.now_ns();
  const std::int64_t server_ms = node_.server_now_us(now) / 1000;
  const redis::sorted_set* set = holders();
  // The survivor's score (ms on the acquire's clock), when the set still holds it.
  std::int64_t score_ms = 0;
  bool scored = false;
  if (set != nullptr)
    if (const std::optional<double> sc = set->score(member)) {
      score_ms = static_cast<std::int64_t>(*sc);
      scored = true;
    }
  const std::string permit = "permit " + std::string(member);
  const std::string own = "worker " + std::to_string(wi) + "'s acquire";
  if (sc_.gates.front().world_mut == scenario::world_mutation::no_reaping) {
    std::string s = permit + " survived " + own;
    if (scored) s += ", " + span((server_ms - score_ms) * sim::ms) + " after it was scored";
    add(out, {cause_kind("acquire_does_not_reap"), s + ", on a " + span(lease_ns_) +
                                                       " lease: the acquire does not reap (mutation no_reaping)"});
    return;
  }
  const std::string whose = protocol_ ? "the protocol's acquire for worker " + std::to_string(wi) : own;
  if (now_read.past_by_it && now_read.callers) {
    // Past its lease by the caller's now the script compared with too: no clock is to blame, the script left it.
    std::string s = whose + " left " + permit;
    if (scored) s += " (score " + clock_ms(score_ms) + ")";
    s += " in the set, though by the now its caller passed (" + clock_ms(now_read.now_ms) +
         ") the permit was past its expiry: the acquire reaps fewer expired permits than there are";
    add(out, {cause_kind("acquire_does_not_reap"), std::move(s)});
    return;
  }
  if (now_read.callers) {
    // The script's now was behind the server's: the caller's clock was behind, or the now was old by
    // the time the script ran (taken when the call was sent, the call held up on its way).
    const worker_fate& w = fates_[wi];
    const std::int64_t caller_ms = w.clock.wall_ms(now);
    const std::int64_t behind_ms = server_ms - caller_ms;  // the caller's clock behind the server's, now
    const std::int64_t aged_ms = caller_ms - now_read.now_ms;  // how old the now was when the script ran
    const std::string theirs = (on_token(wi, member) ? "its own " : "") +
                               permit + (scored ? " (score " + clock_ms(score_ms) + ")" : std::string());
    if (aged_ms > behind_ms) {
      add(out, {cause_kind("stale_caller_now"),
                own + " ran at " + clock_ms(server_ms) + " by the server's clock with the now its caller took " +
                    span(aged_ms * sim::ms) + " earlier, when it sent the call (" + clock_ms(now_read.now_ms) +
                    "): by that now " + theirs + " was within its " + span(lease_ns_) +
                    " lease; by the server's clock it was past it"});
      return;
    }
    std::string s;
    if (on_token(wi, member))
      s = own + " scored its own " + permit + " by its clock, " + off(w.clock.offset_ns(now)) + ": score " +
          clock_ms(score_ms) + ", which the server's clock (" + clock_ms(server_ms) + ") already counts past its " +
          span(lease_ns_) + " lease";
    else {
      s = permit;
      if (scored) s += ", score " + clock_ms(score_ms) + ",";
      s += " outlived its " + span(lease_ns_) + " lease by the server's clock (" + clock_ms(server_ms) + "), but " + own +
           " reaps by its own clock, " + off(w.clock.offset_ns(now)) + ": its now " + clock_ms(now_read.now_ms);
    }
    add(out, {cause_kind("caller_clock_skew"), std::move(s)});
    return;
  }
  if (protocol_) {
    add(out, {cause_kind("acquire_does_not_reap"), whose + " left " + permit + " in the set past its expiry by the server's clock"});
    return;
  }
}

bool lease_causes::fleet_exhausted(std::vector<cause>& out, const std::string& prefix) const {
  if (sc_.fleet.on_acquire_timeout != scenario::acquire_timeout_policy::requeue_and_exit) return false;
  const std::size_t queued = queued_.size();
  if (queued == 0) return false;
  std::int64_t exited = 0, crashed = 0, retired = 0, drained = 0;
  vtime_ns last_exit_ns = -1;
  for (const worker_fate& w : fates_) {
    // A worker that exited and crashed afterwards was gone at its exit (a crash never restarted changes nothing).
    if (w.exited) {
      ++exited;
      last_exit_ns = std::max(last_exit_ns, w.exited_ns);
    } else if (!w.alive) {
      ++crashed;
    } else if (w.drained) {
      ++drained;
    } else if (w.retired) {
      ++retired;
    } else {
      return false;  // a worker is still there to take the queue
    }
  }
  if (exited == 0) return false;
  const auto n = static_cast<std::int64_t>(workers());
  ADMIT_ASSERT(exited + crashed + retired + drained == n && last_exit_ns >= 0 && last_exit_ns <= sched_.now_ns(),
               "every worker gone, one way each, the last exit before now");
  std::string s = prefix + (n == 1 ? std::string("the only worker") : "all " + count_text(n, "worker", "workers"));
  if (exited == n) {
    s += " exited after acquire timeouts (the last at " + at(last_exit_ns) + ")";
  } else {
    s += " gone: " + std::to_string(exited) + " exited after acquire timeouts (the last at " + at(last_exit_ns) + ")";
    if (crashed) s += ", " + std::to_string(crashed) + " crashed, never restarted";
    if (retired) s += ", " + std::to_string(retired) + " stopped taking work after a lost renewal";
    if (drained) s += ", " + std::to_string(drained) + " found the queue empty after the last arrival and returned";
  }
  s += "; " + count_text(static_cast<std::int64_t>(queued), "item", "items") + " left in the queue";
  add(out, {cause_kind("fleet_exhausted"), std::move(s)});
  return true;
}

void lease_causes::not_live(std::vector<cause>& out, bool items_unended) {
  const vtime_ns now = sched_.now_ns();
  if (items_unended && fleet_exhausted(out, "")) return;
  if (items_unended) {
    std::string gone;
    std::size_t working = 0, listed = 0;
    for (std::size_t wi = 0; wi < workers(); ++wi) {
      const worker_fate& w = fates_[wi];
      if (w.alive && !w.retired) {
        ++working;
        continue;
      }
      if (listed++ == 8) gone += ", ...";
      if (listed > 8) continue;
      if (!gone.empty()) gone += ", ";
      gone += "worker " + std::to_string(wi) +
              (!w.alive ? " crashed at " + at(w.crashed_ns) + ", never restarted"
                        : std::string(" stopped taking work after a lost renewal (on_renewal_lost stop_new_work)"));
    }
    if (working == 0)
      add(out, {cause_kind("no_worker_left"),
                count_text(static_cast<std::int64_t>(queued_.size()), "item", "items") +
                    " still queued with no worker left to take them: " + gone});
    return;
  }
  // Permits left one lease after the end, as the world counts them for fact::run_ended.
  const std::int64_t later_us = node_.server_now_us(now) + (lease_ns_ + sim::ms) / 1000;
  std::int64_t deadline_ms = -1;
  const redis::sorted_set* set = node_.peek_set(server_.holders_key(), later_us, &deadline_ms);
  if (set == nullptr) return;
  const std::string key = deadline_ms < 0 ? std::string("the holders key has no expiry")
                                          : "the holders key expires only at " + clock_ms(deadline_ms);
  std::size_t listed = 0;
  for (const redis::sorted_set::entry& e : set->entries()) {
    if (!server_.live_score(e.score, later_us / 1000)) continue;  // expired: free capacity, as the world counts it
    if (listed++ == check::max_causes_kept) break;
    std::string whose;
    if (const auto named = fleet::parse_token(e.member, workers())) {
      const worker_fate& w = fates_[named->first];
      whose = w.crashed_item == named->second ? "worker " + std::to_string(named->first) + " crashed at " +
                                                    at(w.crashed_ns) + " while holding it"
              : w.release_failed_item == named->second
                  ? "worker " + std::to_string(named->first) + "'s release of it got no answer"
                  : "its holder never released it";
    } else {
      whose = "no worker of the fleet holds it";
    }
    add(out, {cause_kind("permits_never_expire"), "permit " + e.member + " stays in the set: " + whose + ", and " + key});
  }
}

void lease_causes::not_idle(std::vector<cause>& out, const fact::horizon_reached& h) {
  const vtime_ns lh_ns = h.at_ns;
  ADMIT_ASSERT(lh_ns >= 0 && lh_ns <= sched_.now_ns(), "asked at the liveness horizon, once the clock reached it");
  if (fleet_exhausted(out, "at the liveness horizon (" + at(lh_ns) + ") ")) return;
  const std::int64_t at_work = h.at_work, holding = h.holders;
  ADMIT_ASSERT(at_work == std::count_if(fates_.begin(), fates_.end(), [](const worker_fate& w) { return w.on_item; }),
               "the workers on an item are those the causes keep on one");
  const auto& queue = queued_;
  const auto n = [](std::size_t k) { return static_cast<std::int64_t>(k); };
  std::string s = "at the liveness horizon (" + at(lh_ns) + ") " + count_text(n(queue.size()), "item", "items") +
                  " waited in the queue";
  if (!queue.empty()) s += " (the oldest since " + at(queue.front().arrived_ns) + ")";
  s += ", " + count_text(at_work, "item was", "items were") + " at work and " +
       count_text(holding, "worker held a permit", "workers held permits");
  ADMIT_ASSERT(at_work <= n(workers()) && holding <= at_work, "one item and one permit a worker at most");
  add(out, {cause_kind("work_outstanding"), std::move(s)});
}

}  // namespace admit::world::lease
