// work_items: the fleet's one shared queue of work items, and how each ended.
//
// An item arrives (counted as a request), waits in the queue until a worker
// takes it, and ends once: completed, refused by the portal (rate_limited),
// given up by its client (client_timeout), deferred, or crashed with its
// worker. The book counts arrivals and endings, so that liveness can ask
// whether every item that arrived has ended.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>

#include "gate/admit_assert.hpp"
#include "sim/kernel/vtime.hpp"
#include "sim/world/lease/lease_timeline.hpp"
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
  work_items(lease_timeline& tl, run_metrics& metrics) : tl_(tl), metrics_(metrics) {}

  bool empty() const noexcept { return queue_.empty(); }
  std::uint64_t arrived() const noexcept { return arrived_; }
  std::uint64_t ended() const noexcept { return ended_; }
  std::uint64_t unended() const noexcept { return arrived_ - ended_; }

  // Whether every arrival has come.
  bool arrivals_done() const noexcept { return arrivals_done_; }
  void close_arrivals() noexcept { arrivals_done_ = true; }

  // The number the next arrival gets (items count from 1).
  std::uint64_t next_number() { return ++arrived_; }

  void push(const work_item& it, vtime_ns now) {
    ++metrics_.requests;
    queue_.push_back(it);
    tl_.set_waiting(queue_.size());
    if (lane* l = tl_.lane_of(it.number)) l->arrived_ns = now;
  }
  work_item pop() {
    ADMIT_ASSERT(!queue_.empty(), "a worker takes an item only from a non-empty queue");
    work_item it = queue_.front();
    queue_.pop_front();
    tl_.set_waiting(queue_.size());
    return it;
  }

  // `how`: "completed" or the reason it was refused (the report's key).
  // Always inline (every item ends once, from the large coroutine bodies);
  // a refusal's count, a map lookup, out of line.
  [[gnu::always_inline]] void end(const work_item& item, const char* how, vtime_ns now) {
    ADMIT_ASSERT(ended_ < arrived_, "an item ends once, after it arrived");
    ++ended_;
    if (lane* l = tl_.lane_of(item.number)) {
      l->ended_ns = now;
      l->outcome = how;
    }
    if (std::strcmp(how, "completed") == 0)
      ++metrics_.completed;
    else
      count_refused(how);
  }

 private:
  [[gnu::noinline]] void count_refused(const char* how) { ++metrics_.refused[how]; }

  lease_timeline& tl_;
  run_metrics& metrics_;
  std::deque<work_item> queue_;
  std::uint64_t arrived_ = 0;
  std::uint64_t ended_ = 0;
  bool arrivals_done_ = false;
};

}  // namespace admit::world::lease
