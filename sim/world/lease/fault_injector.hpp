// fault_injector: applies the scenario's faults at their times, each to the
// part it concerns (the effect of each kind lives in that part):
//  * crash: the worker's generation ends (fleet); its item ends "crashed";
//    with a duration it restarts after it;
//  * pause: a worker (fleet) or the Redis node (redis_node);
//  * partition: a link or a node (network; a cut of a worker, every node's);
//  * clock_step: a worker's wall clock (fleet) or the server's (redis_node);
//  * redis_restart, redis_failover: the node's state (redis_node); every
//    worker on an item may have lost its permit (fleet);
//  * client_timeout_burst: the read timeouts of the items arriving (portal).
// With several Redis nodes a fault on "redis" strikes the node its `node`
// names (its state, clock, pause and links), and a worker's crash, pause or
// clock step is the same on every link.
// Each fault is published as it begins (fact::fault_began: the monitors trace
// it, a timeline draws it as a window), and a crash as a worker's (whether it
// held a permit). A restart or
// failover also tells the server side which permits the node came back
// without, and a crash tells the portal that the worker left its connection
// open, so that a violation can say why (permit_loss.hpp).
#pragma once

#include <span>
#include <vector>

#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease/fleet.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/lease/network.hpp"
#include "sim/world/lease/portal.hpp"
#include "sim/world/lease/redis_node.hpp"
#include "sim/world/lease/server_side.hpp"
#include "sim/world/lease/work_items.hpp"

namespace admit::world::lease {

class fault_injector {
 public:
  fault_injector(sim::scheduler& sched, fleet& workers, work_items& items, redis_node& node, server_side& server,
                 network& net, portal& svc, fact_bus& facts)
      : sched_(sched), fleet_(workers), items_(items), portal_(svc), facts_(facts) {
    nodes_.push_back(node_parts{&node, &server, &net});
  }
  // A quorum world's further nodes (1, 2, ...), in order: a fault on Redis strikes its `node`.
  void add_node(redis_node& node, server_side& server, network& net) {
    nodes_.push_back(node_parts{&node, &server, &net});
  }

  // Schedules every fault of `schedule` at its time (same-instant faults in file order).
  void schedule(std::span<const scenario::fault_spec> schedule);
  void apply(const scenario::fault_spec& f);
  // The worker's process dies now by its own client's policy (on_renewal_lost "crash_process", not a fault of
  // the scenario's) and comes back after `restart_after_ns`, as a crash with that duration does.
  void crash_process(std::size_t wi, sim::vtime_ns restart_after_ns);

 private:
  void crash(std::size_t wi, const scenario::fault_spec& f);
  // A restart or failover (`lose` runs it): the permits the node came back without.
  struct node_parts {
    redis_node* node;
    server_side* server;
    network* net;
  };
  template <class Lose>
  void lose_state(const node_parts& on, const permit_loss& how, Lose&& lose);
  // A protocol whose set-up runs again after a restart or failover: at `back_at`, when the node is up.
  void rerun_setup(const node_parts& on, sim::vtime_ns back_at);

  sim::scheduler& sched_;
  fleet& fleet_;
  work_items& items_;
  std::vector<node_parts> nodes_;  // node 0 first
  portal& portal_;
  fact_bus& facts_;
};

}  // namespace admit::world::lease
