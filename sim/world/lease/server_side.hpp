// server_side: what happens when a script call reaches the Redis node.
//
// The node runs the script (or a mutant's broken acquire); around it the
// server side asks the node what the monitors need at that instant — was the
// token already a member, which live holders the acquire reaps, which stale
// permits survive it, how many members are left — and reports it to the
// monitors, the fleet (a holder that lost its permit) and the timeline.
#pragma once

#include <cstddef>

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

 private:
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
};

}  // namespace admit::world::lease
