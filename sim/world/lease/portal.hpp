// portal: the service the fleet protects, with its own true connection cap.
//
// What it does above its cap is the scenario's service.over_cap:
//  * reject_429: a connection above the cap is answered 429 at once. What
//    the monitors judge is the *attempted* concurrency: the open connections
//    plus the refused attempts, each counted for the service time it asked
//    for or until its worker's next call, so that a surge shows how far
//    demand went above the cap (not only that the cap was reached);
//  * serve: every connection is served, and the monitors judge the true
//    in-flight count.
// A served connection runs for its service time. What happens when its
// client closes it first (a read timeout, a crash of its worker, a client
// giving up the call) is the scenario's service.on_client_close:
//  * keep_work: the work keeps running to its end, and keeps its slot;
//  * free_slot: the portal stops the work and frees the slot at once (the
//    close scheduled for its end then finds it gone and does nothing).
// A client-timeout burst fault shortens the read timeout of the items that
// arrive during it.
//
// The portal keeps each open connection's item and worker, to close it once:
// the one its worker is on (one per worker, found by its index), and those
// their workers left open (a client timeout, a crash: a short list). What a
// violation would say of them (the permits they ran under, what filled the
// portal at a 429) is kept by the causes (lease_causes) from the facts the
// portal publishes: opened, refused, left open, refusal over, closed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/lease/work_items.hpp"

namespace admit::world::lease {

class portal {
 public:
  // One open connection: whose, for which item.
  struct connection {
    bool open = false;
    std::size_t worker = 0;
    std::uint64_t number = 0;
  };
  // A refused attempt still counted (reject_429), until its worker's next call or the end of the
  // service time it asked for.
  struct refused_attempt {
    bool live = false;
    std::uint64_t generation = 0;
  };

  portal(sim::scheduler& sched, fact_bus& facts, std::int64_t cap, vtime_ns read_timeout_default_ns,
         bool serve_over_cap, bool free_slot_on_close, std::size_t workers)
      : sched_(sched),
        facts_(facts),
        cap_(cap),
        read_timeout_default_ns_(read_timeout_default_ns),
        serve_over_cap_(serve_over_cap),
        free_slot_on_close_(free_slot_on_close),
        refused_(serve_over_cap ? 0 : workers),
        on_(workers) {
    ADMIT_ASSERT(cap >= 1 && read_timeout_default_ns > 0 && workers >= 1,
                 "the loader refuses a cap of 0, a read timeout of 0 and an empty fleet");
  }
  // The counts as a fact tells them.
  fact::portal_counts counts(std::size_t wi) const noexcept { return {wi, attempted(), cap_, open_}; }

  // One call for `item` from worker `wi`, under its permit (or, `under_permit`
  // false, without one): 200, 429, 0 when the client's read timeout came first, or -1 when
  // the client gave up the call itself (`*wait_slot` names the call's wait
  // while it runs, for the client to cancel; the connection stays open for
  // its service time all the same).
  sim::awaitable<int> call(std::size_t wi, const work_item& item, bool under_permit,
                           sim::sim_timer** wait_slot = nullptr);

  // Worker `wi` leaves the connection of its item open (its item is over for
  // it, or it crashed).
  [[gnu::always_inline]] void detach(std::size_t wi) {
    if (on_[wi].open) [[unlikely]]
      leave(wi, -1);
  }
  // Worker `wi` crashed at `now`: its connection runs on without it, or
  // (free_slot) its socket's close stops the work.
  void worker_crashed(std::size_t wi, vtime_ns now) {
    if (free_slot_on_close_) {
      // Every socket of the process closes: the connection it was on, and one it sent without a permit
      // (fail_open; under free_slot no other connection is left open, a client that leaves one closes it).
      if (on_[wi].open) close(on_[wi].number, wi);
      for (std::size_t i = left_.size(); i-- > 0;)
        if (left_[i].worker == wi) close(left_[i].number, wi);
      return;
    }
    if (on_[wi].open) leave(wi, now);
  }
  // Whether a connection its client closes stops its work (service.on_client_close: free_slot).
  bool frees_slot_on_close() const noexcept { return free_slot_on_close_; }
  std::int64_t cap() const noexcept { return cap_; }

  std::int64_t open() const noexcept { return open_; }
  // Open connections plus the refused attempts still counted (reject_429).
  std::int64_t attempted() const noexcept { return open_ + refused_open_; }

  // The read timeout of an item arriving now (`asked`: the arrival's own).
  vtime_ns read_timeout_for(std::optional<vtime_ns> asked) const {
    const vtime_ns t = asked.value_or(read_timeout_default_ns_);
    return sched_.now_ns() < burst_until_ns_ ? std::min(t, burst_timeout_ns_) : t;
  }
  void burst(vtime_ns until_ns, vtime_ns timeout_ns) {
    burst_until_ns_ = until_ns;
    burst_timeout_ns_ = timeout_ns;
  }

 private:
  void close(std::uint64_t number, std::size_t wi);
  // The work's own end, scheduled when it opened: under free_slot its client may have closed it already.
  void work_ended(std::uint64_t number, std::size_t wi);
  // The client of item `number` (worker `wi`) closed its connection: under free_slot the work stops now.
  void client_closed(std::uint64_t number, std::size_t wi) {
    // A crash of its worker may have closed it already (every socket of the process closes, and the crash's
    // cancellation then ends the client's wait): a connection closes once.
    if (free_slot_on_close_ && still_open(number, wi)) close(number, wi);
  }
  // Whether item `number`'s connection, made by worker `wi`, is still open.
  bool still_open(std::uint64_t number, std::size_t wi) const {
    const connection& c = on_[wi];
    if (c.open && c.number == number) return true;
    return std::any_of(left_.begin(), left_.end(), [&](const connection& l) { return l.number == number; });
  }
  // Worker `wi` leaves its connection open (`crashed_ns`: when it crashed, or -1).
  [[gnu::noinline]] void leave(std::size_t wi, vtime_ns crashed_ns);
  // reject_429: worker `wi`'s refused attempt stops counting.
  void drop_refused(std::size_t wi);

  sim::scheduler& sched_;
  fact_bus& facts_;
  std::int64_t cap_;
  std::int64_t open_ = 0;
  vtime_ns read_timeout_default_ns_;
  vtime_ns burst_until_ns_ = 0;
  vtime_ns burst_timeout_ns_ = 0;
  bool serve_over_cap_;
  bool free_slot_on_close_;
  std::vector<refused_attempt> refused_;  // reject_429: one per worker
  std::int64_t refused_open_ = 0;         // how many of them are live
  std::vector<connection> on_;            // per worker: the connection it is on (open), if any
  std::vector<connection> left_;          // open connections no worker is on (in the order they were left)
};

}  // namespace admit::world::lease
