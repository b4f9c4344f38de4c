// server_side: what happens when a script call reaches the Redis node.
//
// The node runs the script (or a mutant's broken acquire); around it the
// server side asks the node what the monitors need at that instant — was the
// token already a member, which live holders the acquire reaps, which stale
// permits survive it, how many members are left — and reports it to the
// monitors, the fleet (a holder that lost its permit) and the timeline.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/kernel/scheduler.hpp"
#include "sim/world/lease/fleet.hpp"
#include "sim/world/lease/lease_monitors.hpp"
#include "sim/world/lease/lease_timeline.hpp"
#include "sim/world/lease/network.hpp"
#include "sim/world/lease/redis_node.hpp"

namespace admit::world::lease {

class server_side final : public script_server {
 public:
  server_side(sim::scheduler& sched, redis_node& node, fleet& workers, lease_monitors& monitors,
              lease_timeline& tl, scenario::world_mutation mut)
      : sched_(sched), node_(node), fleet_(workers), monitors_(monitors), tl_(tl), mut_(mut) {}

  redis::script_reply execute(std::size_t wi, redis::script_op op, const call_req& req) override;
  void add_after_check(std::size_t wi, const call_req& req) override;
  redis::reply execute_command(std::size_t wi, const gate::command_request& req) override;

  // A protocol run: where its permits live (the holders key, expanded) and
  // what their scores mean.
  void use_protocol(const redis::protocol& proto, std::string holders_key, std::int64_t lease_ms);
  // The first script error of a protocol run (the run stops there and is inconclusive).
  const std::optional<script_failure>& failure() const noexcept { return failure_; }
  // Where the server keeps the permits: the gate key, or a protocol's holders key.
  const std::string& holders_key() const noexcept { return holders_key_; }
  void set_holders_key(std::string key) { holders_key_ = std::move(key); }

 private:
  // Which holders lost their permits to this command (every member of the
  // holders set before it that is gone after it, but the caller's own release).
  void notice_losses(const gate::command_request& req, std::span<const std::string> before,
                     const redis::sorted_set* after);
  void script_failed(std::size_t wi, const gate::command_request& req);

  // The holders whose permits the key's expiry takes at this command.
  void notice_expiry(const call_req& req, std::int64_t now_us);
  // The holders whose permits this script's reaping takes.
  void notice_reaping(const call_req& req, std::int64_t now_us);

  sim::scheduler& sched_;
  redis_node& node_;
  fleet& fleet_;
  lease_monitors& monitors_;
  lease_timeline& tl_;
  scenario::world_mutation mut_;
  const redis::protocol* proto_ = nullptr;
  std::string holders_key_;
  std::int64_t lease_ms_ = 0;
  // execute_command's copy of the holders before the command, kept between
  // commands so that its strings keep their capacity (no allocation per
  // command once they have grown); only the first `holders_before_count_`
  // are this command's.
  std::vector<std::string> holders_before_;
  std::size_t holders_before_count_ = 0;
  std::optional<script_failure> failure_;
};

}  // namespace admit::world::lease
