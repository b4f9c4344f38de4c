#include "sim/world/lease/portal.hpp"

#include <boost/asio/as_tuple.hpp>
#include <algorithm>

#include "gate/admit_assert.hpp"
#include "sim/kernel/sim_timer.hpp"

namespace admit::world::lease {

void portal::drop_refused(std::size_t wi) {
  ADMIT_ASSERT(wi < refused_.size(), "a worker of this fleet");
  refused_attempt& r = refused_[wi];
  if (!r.live) return;
  ADMIT_ASSERT(refused_open_ > 0, "a live refused attempt is counted");
  r.live = false;
  --refused_open_;
  facts_.publish(fact::portal_refusal_over{counts(wi)});
}

void portal::leave(std::size_t wi, vtime_ns crashed_ns) {
  ADMIT_ASSERT(wi < on_.size() && on_[wi].open, "a worker of this fleet leaves the connection it is on");
  connection& c = on_[wi];
  left_.push_back(c);
  c.open = false;
  facts_.publish(fact::connection_left{wi, c.number, crashed_ns});
}

sim::awaitable<int> portal::call(std::size_t wi, const work_item& item, bool under_permit,
                                 sim::sim_timer** wait_slot) {
  ADMIT_ASSERT(wi < on_.size() && (serve_over_cap_ || wi < refused_.size()), "a worker of this fleet");
  ADMIT_ASSERT(item.service_ns >= 0 && item.read_timeout_ns >= 0, "the loader refuses a negative duration");
  ADMIT_ASSERT(open_ >= 0 && refused_open_ >= 0, "the portal's counts are never negative");
  if (!serve_over_cap_) {
    drop_refused(wi);  // a worker makes one call at a time: its refused one is over
    if (open_ + 1 > cap_) [[unlikely]] {
      refused_attempt& r = refused_[wi];
      r.live = true;
      ++r.generation;
      ++refused_open_;
      facts_.publish(fact::portal_refused{counts(wi), item.number, under_permit});
      sched_.schedule_after(item.service_ns, [this, wi, g = r.generation] {
        if (refused_[wi].live && refused_[wi].generation == g) drop_refused(wi);
      });
      co_return 429;
    }
  }
  ++open_;
  if (under_permit) [[likely]] {
    connection& c = on_[wi];
    ADMIT_ASSERT(!c.open, "a worker is on one connection at a time");
    c = connection{true, wi, item.number};
  } else {
    // Sent without a permit (fail_open): no worker stays on it.
    left_.push_back(connection{true, wi, item.number});
  }
  ADMIT_ASSERT(open_ >= 1 && (serve_over_cap_ || open_ <= cap_), "a connection opens within the cap, unless served over it");
  facts_.publish(fact::portal_opened{counts(wi), item.number, under_permit, item.service_ns});
  sched_.schedule_after(item.service_ns, [this, n = item.number, wi] { work_ended(n, wi); });
  // sim::sleep_for's body, without a coroutine frame of its own.
  sim::sim_timer wait(sched_);
  if (wait_slot != nullptr) [[unlikely]] {
    // A client that may give up the call: its wait can be cancelled.
    *wait_slot = &wait;
    const bool served = item.service_ns <= item.read_timeout_ns;
    wait.expires_after(served ? item.service_ns : item.read_timeout_ns);
    auto [ec] = co_await wait.async_wait(boost::asio::as_tuple(sim::use_awaitable));
    *wait_slot = nullptr;
    if (ec) {
      facts_.publish(fact::client_left{wi, item.number, open_, false, under_permit});
      client_closed(item.number, wi);
      co_return -1;
    }
    if (served) co_return 200;
    facts_.publish(fact::client_left{wi, item.number, open_, true, under_permit});
    client_closed(item.number, wi);
    co_return 0;
  }
  if (item.service_ns <= item.read_timeout_ns) {
    wait.expires_after(item.service_ns);
    co_await wait.async_wait(sim::use_awaitable);
    co_return 200;
  }
  wait.expires_after(item.read_timeout_ns);
  co_await wait.async_wait(sim::use_awaitable);
  facts_.publish(fact::client_left{wi, item.number, open_, true, under_permit});
  client_closed(item.number, wi);
  co_return 0;
}

void portal::work_ended(std::uint64_t number, std::size_t wi) {
  if (free_slot_on_close_) {
    // Its client may have closed it first (a timeout, a crash, a call given up): then it is over already.
    if (!still_open(number, wi)) return;
  }
  close(number, wi);
}

void portal::close(std::uint64_t number, std::size_t wi) {
  ADMIT_ASSERT(open_ > 0, "a connection closes only while one is open");
  connection& c = on_[wi];
  if (c.open && c.number == number) [[likely]] {
    c.open = false;
  } else {
    const auto it = std::find_if(left_.begin(), left_.end(), [&](const connection& l) { return l.number == number; });
    ADMIT_ASSERT(it != left_.end(), "a connection closes once, while open");
    left_.erase(it);  // keeps the order they were left in
  }
  --open_;
  ADMIT_ASSERT(open_ >= 0 && !(c.open && c.number == number), "the connection is closed and counted out");
  facts_.publish(fact::portal_closed{counts(wi), number});
}

}  // namespace admit::world::lease
