// lease_causes: why an invariant of the lease world broke, in the domain's
// words, from what the world recorded (never a guess from the symptoms).
//
// The monitors ask it only while they describe a violation (a level window
// opens or peaks, an event check fails: check::monitor's cold path). It reads
// no part of the world: it keeps what the facts (facts.hpp) tell, and it is
// subscribed first, so that what it keeps is whole at every instant an
// invariant judges. It keeps each worker's fate (its replies lost or run late,
// its crashes, failed releases, exits, drains and lost renewals, its clock's
// steps), the story of the permit of the item it is on (permit_loss.hpp: its
// grant, renewals, loss, rollback, its client leaving the portal), the
// portal's connections with the permits they run under (a copy once their
// worker left them open), each refused attempt still counted with what filled
// the portal then, and the queue of items. The one thing it reads beside the
// facts is the Redis nodes' data (the holders now), read-only, as any client
// of the server would read it: a fact would have to copy the sets whole.
//  * portal_inflight_le_cap: each connection asked of the portal (open, or a
//    refused attempt still counted) whose permit is not in the set, and the
//    record of that permit (permit_loss.hpp): how it left the set (reaped by
//    a script, by whose clock; expired with the key; forgotten by a restart;
//    lost in a failover) and, from when it was granted and last renewed and
//    the request's length, which of those it was: a caller's clock, the
//    server's clock, a request longer than an unrenewed lease, a renewal
//    that came too late, a holder that crashed, or a client timeout that
//    released it while the connection stayed open. When the connections that
//    do hold permits are themselves more than the cap, the lease limit is
//    above it, or the set held more permits than its limit;
//  * gate_inflight_le_cap: the non-atomic check-then-add (its count, then its
//    add) or the protocol's script that left too many permits;
//  * token_granted_once: the first grant of the token, and what became of its
//    reply (lost on the way, or the script ran after the client gave up);
//  * expired_leases_reaped: whose clock the acquire reaped by, or an acquire
//    that does not reap;
//  * liveness: the workers that were gone (under run_fleet's requeue_and_exit,
//    exited after acquire timeouts with items left in the queue), the permits
//    left under a key that never expires, the work outstanding at the horizon.
// Each cause is a row of check::cause_table and one sentence with figures;
// times of day are on the world's epoch (2026-02-28T00:00:00Z), as the
// permits' scores are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/check/results.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/lease/fleet.hpp"  // worker_clock, the tokens' form
#include "sim/world/lease/lease_monitors.hpp"
#include "sim/world/lease/permit_loss.hpp"
#include "sim/world/lease/redis_node.hpp"
#include "sim/world/lease/server_side.hpp"

namespace admit::world::lease {

class lease_causes final : public cause_finder, public fact_sink {
 public:
  // `protocol`: the run is a protocol's (its scripts are the user's). Whose
  // clock an acquire read is told with each survivor (acquire_now).
  // `renew_every_ns`: how often holders renew (the client's policy), if they do.
  lease_causes(sim::scheduler& sched, const scenario::scenario& sc, bool protocol,
               std::optional<vtime_ns> renew_every_ns, const redis_node& node, const server_side& server);

  // --- what it keeps of the facts --------------------------------------------------
  // The workers' fates.
  void on(const fact::reply_lost& f) override;
  void on(const fact::ran_late& f) override;
  void on(const fact::worker_crashed& f) override;
  void on(const fact::worker_restarted& f) override;
  void on(const fact::worker_drained& f) override;
  void on(const fact::release_failed& f) override;
  void on(const fact::gave_up& f) override;
  void on(const fact::renewal_lost& f) override;
  void on(const fact::fault_began& f) override;
  // The permit of the item each worker is on.
  void on(const fact::acquiring& f) override;
  void on(const fact::left_item& f) override;
  void on(const fact::permit_granted& f) override;
  void on(const fact::permit_renewed& f) override;
  void on(const fact::permit_counted& f) override;
  void on(const fact::permit_lost& f) override;
  void on(const fact::permit_rolled_back& f) override;
  // The portal's connections and refused attempts.
  void on(const fact::portal_opened& f) override;
  void on(const fact::connection_left& f) override;
  void on(const fact::client_left& f) override;
  void on(const fact::portal_closed& f) override;
  void on(const fact::portal_refused& f) override;
  void on(const fact::portal_refusal_over& f) override;
  // The queue.
  void on(const fact::item_queued& f) override;
  void on(const fact::item_taken& f) override;

  // A quorum run's further nodes (1, 2, ...): a permit is then in the set
  // when a majority of the nodes' sets hold it.
  void add_node(const redis_node& node) { more_nodes_.push_back(&node); }

  void portal(std::vector<check::cause>& out) override;
  void gate(std::vector<check::cause>& out, std::size_t wi, redis::script_op op, std::string_view token,
            std::int64_t members, bool split_add) override;
  std::string regrant(std::size_t wi, std::string_view token) override;
  void survivor(std::vector<check::cause>& out, std::size_t wi, std::string_view member, const acquire_now& now) override;
  void not_live(std::vector<check::cause>& out, bool items_unended) override;
  void not_idle(std::vector<check::cause>& out, const fact::horizon_reached& at) override;

 private:
  // reject_429, as an attempt is refused: what fills the portal now, kept
  // without its sentences (made only if a violation asks).
  void refusal(std::size_t refused_wi, refusal_snapshot& out) const;
  // Why the permit of `record` (item of worker `wi`, token `token`) covers
  // no connection: one cause.
  check::cause uncovered(std::size_t wi, std::string_view token, const permit_record& record, vtime_ns opened_ns,
                         bool under_permit) const;
  check::cause lost(std::string_view token, const permit_record& record, const permit_loss& loss) const;
  // The connections under permits in the set were more than the cap: the
  // limit is above it, or the set held more permits than its limit.
  check::cause too_many_covered(std::int64_t covered) const;
  // Whether the permit `token` is in the set now (in a quorum run: in a majority of the nodes' sets).
  bool in_set(const redis::sorted_set* set, std::string_view token) const;
  const redis::sorted_set* holders() const;
  // fleet.on_acquire_timeout requeue_and_exit: items queued and no worker left to take them, at least one of
  // them gone after an acquire that gave up. Adds the cause (its sentence after `prefix`) and returns true.
  bool fleet_exhausted(std::vector<check::cause>& out, const std::string& prefix) const;
  std::size_t workers() const noexcept { return fates_.size(); }
  // The record of worker `wi`'s permit for item `number`, while the worker is on that item.
  permit_record* current(std::size_t wi, std::uint64_t number) {
    worker_fate& w = fates_[wi];
    return w.on_item && w.permit.number == number ? &w.permit : nullptr;
  }
  // Whether `token` is the token of the item worker `wi` is on.
  bool on_token(std::size_t wi, std::string_view token) const {
    const worker_fate& w = fates_[wi];
    return w.on_item && names(token, wi, w.permit.number);
  }
  // Whether `token` is "w<wi>-<number>" (read, not built: asked at every grant).
  bool names(std::string_view token, std::size_t wi, std::uint64_t number) const {
    const auto named = fleet::parse_token(token, workers());
    return named && named->first == wi && named->second == number;
  }
  // O(connections): the counts it keeps are the portal's (at every portal fact).
  void agrees(const fact::portal_counts& at) const;

  sim::scheduler& sched_;
  const scenario::scenario& sc_;
  const bool protocol_;
  const std::optional<vtime_ns> renew_every_ns_;
  const redis_node& node_;
  const server_side& server_;
  std::int64_t limit_;
  vtime_ns lease_ns_;
  std::int64_t cap_;  // the portal's true cap
  // What became of a worker, as the facts told it.
  struct worker_fate {
    vtime_ns reply_lost_ns = -1;         // the last reply lost on its way back
    bool reply_lost_redis_down = false;  // lost because the node went down (else the link was cut)
    vtime_ns ran_late_ns = -1;           // the last call the server ran after its client stopped waiting
    vtime_ns crashed_ns = -1;            // its last crash
    std::uint64_t crashed_item = 0;      // the item it held a permit for then (0: none)
    std::uint64_t release_failed_item = 0;  // the last item whose release got no confirmation (0: none)
    vtime_ns exited_ns = -1;             // its last exit after an acquire that gave up (requeue_and_exit)
    // How its generation's loop stands (a restart clears all but `alive`).
    bool alive = true;
    bool exited = false;   // requeue_and_exit: gone after an acquire that gave up
    bool drained = false;  // returned on an empty queue after the last arrival
    bool retired = false;  // stop_new_work: takes no new item after a lost renewal
    worker_clock clock;    // its wall clock, with the steps injected so far
    bool on_item = false;  // on an item: `permit` is that item's
    permit_record permit;
  };
  std::vector<worker_fate> fates_;  // per worker
  struct queued_item {
    std::uint64_t number;
    vtime_ns arrived_ns;
  };
  std::deque<queued_item> queued_;  // the items waiting, oldest first
  // The portal's open connections: the one each worker is on (its `attached` record is the worker's
  // own), then those left open (with a copy of their permit's record).
  std::vector<portal_connection> on_;
  std::vector<portal_connection> left_;
  std::int64_t open_ = 0;
  // reject_429: each worker's refused attempt still counted, and what filled the portal then.
  struct refused_attempt {
    bool live = false;
    std::uint64_t number = 0;
    refusal_snapshot filled;
    // The permit the attempt was made under, as it was at the 429 (its worker moves on to other items
    // while the attempt is still counted): how that permit left the set, if it had.
    bool under_permit = true;
    permit_record permit;
  };
  std::vector<refused_attempt> refused_;
  std::int64_t refused_open_ = 0;
  std::vector<const redis_node*> more_nodes_;
};

}  // namespace admit::world::lease
