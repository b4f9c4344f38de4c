// server_side: what happens when a script call reaches the Redis node.
//
// The node runs the script (or a mutant's broken acquire); around it the
// server side asks the node what happened at that instant — was the token
// already a member, which live holders the script reaps, the holders and
// members left after it — and publishes it as facts (facts.hpp: script_ran,
// permit_taken, split_add) for the invariants, monitors and timeline to
// judge and record, and tells the fleet of a holder that lost its permit.
// It judges nothing itself.
// A permit's story is published as it happens, for a violation's causes
// (lease_causes) to keep: its first grant, its renewals, a count of a
// check-then-add (permit_granted, permit_renewed, permit_counted), how it
// left the set (permit_lost) and a renewal a fault took back
// (permit_rolled_back).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/world/lease/fleet.hpp"
#include "sim/world/lease/lease_monitors.hpp"
#include "sim/world/lease/lease_timeline.hpp"
#include "sim/world/lease/network.hpp"
#include "sim/world/lease/permit_loss.hpp"
#include "sim/world/lease/redis_node.hpp"

namespace admit::world::lease {

class server_side final : public script_server {
 public:
  // `workers` may be built after it (it reports to them only once calls run).
  server_side(sim::scheduler& sched, redis_node& node, fleet& workers, fact_bus& facts, scenario::world_mutation mut)
      : sched_(sched), node_(node), fleet_(workers), facts_(facts), mut_(mut) {}

  redis::reply execute_command(std::size_t wi, const gate::command_request& req) override;
  void add_after_check(std::size_t wi, const gate::command_request& req) override;

  // A protocol run: where its permits live (the holders key, expanded) and
  // what their scores mean.
  // `free_key`: the counter of free permits, when the protocol's holders name one.
  void use_protocol(const redis::protocol& proto, std::string holders_key, std::int64_t lease_ms,
                    std::optional<std::string> free_key = std::nullopt);
  // The fleet's client runs in child processes (process_client.hpp): its calls are whatever the child sends,
  // not the protocol's. Its grants and renewals are read off the holders (a token that joins them is
  // granted, one still among them after a renew is kept), not by the protocol's reply rules; an error reply
  // goes back to the child (its client handles it) rather than stopping the run; and the caller's clock is
  // found by value among the call's arguments (caller_now_ms). Set before the first command.
  void use_process_client() noexcept { process_client_ = true; }
  bool process_client() const noexcept { return process_client_; }
  // A process client's call: the argument (of its first 32) that is the caller's clock, as ms, if one is: a whole integer
  // within 1 ms of a wall-clock reading its operation was given (req.caller_walls_ms, latest first;
  // `int(time.time() * 1000)` truncates), or of such a reading + the lease (an expiry) or - the lease (a
  // cut-off), or a decimal number of seconds within 1 ms of one. The script compared scores with that now;
  // nullopt: no argument is the caller's clock.
  std::optional<std::int64_t> caller_now_ms(const gate::command_request& req) const;

  // The values a protocol's set-up calls expand (the gate's key, limit, lease
  // and queue timeout; {now_ms} is the server's clock when they run). Before run_setup.
  void use_gate_values(std::string key, std::int64_t limit, std::int64_t queue_timeout_ms) {
    gate_key_ = std::move(key);
    gate_limit_ = limit;
    gate_queue_timeout_ms_ = queue_timeout_ms;
  }
  // Runs the protocol's set-up calls now, in order (a script call as EVAL of
  // its body: the first client to set up may find no script loaded). The
  // first whose reply is an error, or that its rule reads as "no", stops the
  // run: it is inconclusive (setup_failed) with setup_failure()'s sentence.
  // `again`: after a restart or failover (a permit it removes from the
  // holders is lost by `setup`). False when the run stops.
  bool run_setup(bool again);
  bool reruns_setup() const noexcept { return proto_ != nullptr && proto_->setup.again_after_restart; }
  const std::optional<std::string>& setup_failure() const noexcept { return setup_failure_; }
  // The first script error of a protocol run (the run stops there and is inconclusive).
  const std::optional<script_failure>& failure() const noexcept { return failure_; }
  // The first reply a protocol's client reads as a grant (or a kept renewal)
  // for a token the server's holders do not show after the call: the world
  // can no longer tell which permits are held, so the run stops there and is
  // inconclusive with this sentence (a reply rule that reads a refusal as a
  // grant, or a `holders` that does not describe where the script keeps its
  // permits).
  const std::optional<std::string>& inconsistency() const noexcept { return inconsistency_; }
  // Where the server keeps the permits: the gate key, or a protocol's holders key.
  const std::string& holders_key() const noexcept { return holders_key_; }
  // Whether a holders member scored `score` is live at server time `at_ms`:
  // scored by its grant (or last renewal), live for a lease after it; scored
  // by its expiry (a protocol's holders.scores "expires_at"), live until it.
  bool live_score(double score, std::int64_t at_ms) const noexcept {
    const bool expires_at = proto_ != nullptr && proto_->holders.scores == redis::score_meaning::expires_at;
    return score > static_cast<double>(expires_at ? at_ms : at_ms - lease_ms_);
  }

  // The permit `member` left the set (`how`): published with its worker and
  // item when a worker of the fleet named it (fact::permit_lost); `live`
  // counts it among the leases taken from a holder still working (a script or
  // the key's expiry, not the node's state: fact::permit_taken).
  void permit_left(std::string_view member, const permit_loss& how, bool live);
  // A fault kept `member` with an older score (a renewal lost with the node's state). One-node runs only:
  // a quorum's permit lives on a majority, whose scores no one node says.
  void permit_rolled_back(std::string_view member, const permit_rollback& how) {
    if (node_members_ != nullptr) return;
    if (const worker_state* w = fleet_.rolled_back(member, how))
      facts_.publish(fact::permit_rolled_back{w->index, member, how});
  }
  // A quorum run's node `index`: `members` holds every node's member count (this
  // node's entry written here), and the monitors and timeline see the largest.
  // A grant or loss reaches the fleet through its majority count (fleet::granted_on, lost_on).
  void set_quorum(std::size_t index, std::vector<std::int64_t>* members) noexcept {
    node_index_ = index;
    node_members_ = members;
  }
  // The holders key's expiry, if it is due, noticed and applied now, as the
  // next command would: before a fault replaces the node's state, so that the
  // permits the key's expiry took are told to their holders as expired, not
  // missed (a key past its deadline reads as no permits, and the fault's diff
  // would see nothing of them) nor noticed twice.
  void settle_expiry() {
    const std::int64_t now_us = node_.server_now_us(sched_.now_ns());
    notice_expiry(now_us);
    (void)node_.set_view(holders_key_, now_us);  // drops the expired key, as a command touching it does
    ADMIT_ASSERT(node_.expiring_set(holders_key_, now_us) == nullptr, "no expired holders key is left to notice");
  }

 private:
  // Which holders lost their permits to this command (every member of the
  // holders set before it that is gone after it, but the caller's own release).
  void notice_losses(std::size_t wi, const gate::command_request& req, std::span<const std::string> before,
                     const redis::sorted_set* after, std::int64_t now_us);
  // The "now" a protocol's command compares scores with: the caller's clock
  // where its call passes {now_ms} (or {expiry_ms}, less the lease) as a whole
  // argument, else the server's.
  std::int64_t command_now_ms(const gate::command_request& req, std::int64_t now_us) const;
  void script_failed(std::size_t wi, const gate::command_request& req);
  // Whether the call passed the caller's clock (the argument the script compares scores with).
  bool callers_now(const gate::command_request& req) const;
  // execute_command for a process client's call (use_process_client), after the node ran it.
  redis::reply process_command(std::size_t wi, const gate::command_request& req, const redis::reply& answer,
                               std::span<const std::string> before, bool was_member, std::int64_t now_us);
  // `why`, when given, says what is inconsistent (else: a grant the holders do not show).
  void protocol_inconsistent(std::size_t wi, const gate::command_request& req, const redis::reply& answer,
                             const redis::reply_read& rule, std::string why = {});

  // The holders whose permits the key's expiry takes at this command (the
  // test inline: a key past its deadline is rare).
  [[gnu::always_inline]] void notice_expiry(std::int64_t now_us) {
    if (const redis::sorted_set* gone = node_.expiring_set(holders_key_, now_us)) [[unlikely]]
      expired(*gone);
  }
  [[gnu::noinline]] void expired(const redis::sorted_set& gone);
  // The server granted (renewed) worker `wi`'s `token`: published when it is the current item's first
  // grant (a renewal of the permit the worker holds).
  void granted(std::size_t wi, std::string_view token);
  void renewed(std::size_t wi, std::string_view token);
  // A loss by worker `wi`'s script, now.
  permit_loss reaped_by(std::size_t wi, bool reaper_clock) const;

  sim::scheduler& sched_;
  redis_node& node_;
  fleet& fleet_;
  fact_bus& facts_;
  scenario::world_mutation mut_;
  const redis::protocol* proto_ = nullptr;
  std::string holders_key_;
  std::optional<std::string> free_key_;  // the protocol's counter of free permits (holders.free), expanded
  std::int64_t lease_ms_ = 0;
  // execute_command's copy of the holders before the command, kept between
  // commands so that its strings keep their capacity (no allocation per
  // command once they have grown); only the first `holders_before_count_`
  // are this command's.
  std::vector<std::string> holders_before_;
  std::vector<double> holders_before_scores_;
  std::size_t holders_before_count_ = 0;
  // Per operation: the argv index of the caller's clock ({now_ms}, or
  // {expiry_ms} when `expiry`), or -1 when its call passes none.
  struct now_arg {
    std::ptrdiff_t index = -1;
    bool expiry = false;
  };
  now_arg now_args_[3];
  std::optional<script_failure> failure_;
  std::optional<std::string> inconsistency_;
  std::optional<std::string> setup_failure_;
  std::string gate_key_;
  std::int64_t gate_limit_ = 0;
  std::int64_t gate_queue_timeout_ms_ = 0;
  std::size_t node_index_ = 0;
  std::vector<std::int64_t>* node_members_ = nullptr;  // set: a quorum run (several nodes)
  bool process_client_ = false;
};

}  // namespace admit::world::lease
