// work_items: the fleet's one shared queue of work items, and how each ended.
//
// An item arrives (counted as a request; its service time is the arrival's
// own or a draw from service.service_time on the run's "service" stream), waits in the queue until a worker
// takes it, and ends once: completed, refused by the portal (rate_limited),
// given up by its client (client_timeout), deferred, or crashed with its
// worker. The book counts arrivals and endings, so that liveness can ask
// whether every item that arrived has ended. Under fleet.on_acquire_timeout
// requeue_and_exit an item whose acquire gave up does not end: it goes back
// to the tail of the queue (requeue), as the design document's run_fleet
// puts it back with queue.put, and is taken again like any other.
#pragma once

#include <cstdint>
#include <deque>

#include "gate/admit_assert.hpp"
#include "sim/kernel/distribution.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/vtime.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::lease {

using sim::vtime_ns;

struct work_item {
  std::uint64_t number = 0;
  vtime_ns arrived_ns = 0;
  vtime_ns service_ns = 0;
  vtime_ns read_timeout_ns = 0;
};

class work_items {
 public:
  // `service_time`: service.service_time, drawn for an arrival without its own; `seed`: the run's.
  work_items(fact_bus& facts, const sim::duration_dist& service_time, std::uint64_t seed)
      : facts_(facts), service_time_(service_time), service_rng_(sim::substream(seed, "service")) {}

  bool empty() const noexcept { return queue_.empty(); }
  // The items waiting for a worker, oldest first.
  const std::deque<work_item>& queued() const noexcept { return queue_; }
  std::uint64_t arrived() const noexcept { return arrived_; }
  std::uint64_t ended() const noexcept { return ended_; }
  std::uint64_t unended() const noexcept { return arrived_ - ended_; }

  // Whether every arrival has come.
  bool arrivals_done() const noexcept { return arrivals_done_; }
  void close_arrivals() noexcept { arrivals_done_ = true; }

  // The arrival `a`, at `now`, becomes the next item (items count from 1)
  // and joins the queue; `read_timeout_ns`: its client's read timeout at the portal.
  void arrive(const arrival& a, vtime_ns now, vtime_ns read_timeout_ns) {
    work_item it;
    it.number = ++arrived_;
    it.arrived_ns = now;
    it.service_ns = a.service_ns ? *a.service_ns : service_time_.sample(service_rng_);
    it.read_timeout_ns = read_timeout_ns;
    push(it, now);
  }
  work_item pop() {
    ADMIT_ASSERT(!queue_.empty(), "a worker takes an item only from a non-empty queue");
    work_item it = queue_.front();
    queue_.pop_front();
    facts_.publish(fact::item_taken{it.number, queue_.size()});
    return it;
  }

  // The item `it`, taken from the queue and not ended, goes back to its tail
  // (run_fleet's queue.put): it is neither a new arrival nor an ending.
  void requeue(const work_item& it) {
    ADMIT_ASSERT(it.number >= 1, "a requeued item is one that arrived");
    ADMIT_ASSERT(it.number <= arrived_, "a requeued item is one that arrived");
    ADMIT_ASSERT(ended_ + queue_.size() < arrived_, "a requeued item was at work, neither queued nor ended");
    ++requeued_;
    queue_.push_back(it);
    facts_.publish(fact::item_queued{it.number, it.arrived_ns, queue_.size(), true});
  }
  std::uint64_t requeued() const noexcept { return requeued_; }

  // `how`: "completed" or the reason it was refused (the report's key).
  void end(const work_item& item, const char* how, vtime_ns now) {
    ADMIT_ASSERT(ended_ < arrived_, "an item ends once, after it arrived");
    ADMIT_ASSERT(now >= item.arrived_ns, "an item ends after it arrived");
    ++ended_;
    facts_.publish(fact::item_ended{item.number, how});
  }

 private:
  void push(const work_item& it, vtime_ns now) {
    ADMIT_ASSERT(it.arrived_ns == now, "an arrival joins the queue as it arrives");
    queue_.push_back(it);
    facts_.publish(fact::item_queued{it.number, it.arrived_ns, queue_.size(), false});
  }
  fact_bus& facts_;
  const sim::duration_dist& service_time_;
  sim::prng service_rng_;
  std::deque<work_item> queue_;
  std::uint64_t arrived_ = 0;
  std::uint64_t ended_ = 0;
  std::uint64_t requeued_ = 0;
  bool arrivals_done_ = false;
};

}  // namespace admit::world::lease
