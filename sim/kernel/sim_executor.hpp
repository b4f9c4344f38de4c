// sim_executor: a standard Asio executor that runs work on a sim::scheduler.
//
// It models Asio's executor concept (execute + properties), so Asio's own
// machinery — co_spawn, awaitable<T, sim_executor>, post, dispatch, deferred,
// parallel_group and the awaitable operators — runs on virtual time.
//
// Blocking. By default the executor is `blocking.possibly`: when the
// scheduler is already running an event on this thread, execute() runs the
// function inline (what asio::dispatch expects); otherwise it queues it.
// `require(blocking.never)` (what asio::post asks for) always queues.
//
// Deliberately absent: the `execution::context` query. Without it no Asio I/O
// object (a real steady_timer, a socket) can be constructed from this
// executor, so a simulation cannot silently start a reactor thread and read
// the wall clock. Use sim_timer for time.
#pragma once

#include <boost/asio/execution.hpp>
#include <boost/asio/is_executor.hpp>
#include <utility>

#include "sim/kernel/scheduler.hpp"

namespace admit::sim {

class sim_executor {
 public:
  explicit sim_executor(scheduler& s) noexcept : sched_(&s) {}

  scheduler& sched() const noexcept { return *sched_; }

  template <class F>
  void execute(F&& f) const {
    if (!never_ && sched_->running()) {
      std::forward<F>(f)();
    } else {
      sched_->post(unique_task(std::forward<F>(f)));
    }
  }

  boost::asio::execution::blocking_t query(boost::asio::execution::blocking_t) const noexcept {
    return never_ ? boost::asio::execution::blocking_t(boost::asio::execution::blocking.never)
                  : boost::asio::execution::blocking_t(boost::asio::execution::blocking.possibly);
  }

  sim_executor require(boost::asio::execution::blocking_t::never_t) const noexcept {
    sim_executor e(*this);
    e.never_ = true;
    return e;
  }
  sim_executor require(boost::asio::execution::blocking_t::possibly_t) const noexcept {
    sim_executor e(*this);
    e.never_ = false;
    return e;
  }

  friend bool operator==(const sim_executor& a, const sim_executor& b) noexcept {
    return a.sched_ == b.sched_ && a.never_ == b.never_;
  }
  friend bool operator!=(const sim_executor& a, const sim_executor& b) noexcept {
    return !(a == b);
  }

 private:
  scheduler* sched_;
  bool never_ = false;
};

static_assert(boost::asio::execution::is_executor<sim_executor>::value,
              "sim_executor must model Asio's executor concept");

}  // namespace admit::sim
