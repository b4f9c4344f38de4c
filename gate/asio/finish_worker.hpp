// async_finish_worker: wait for work that cannot be stopped, even when the
// waiter is cancelled.
//
// Protocol. `start_work(done)` begins the work and must call `done(ec)`
// exactly once when the work has really ended (a thread joined, a virtual
// service time elapsed). The work is started WITHOUT the caller's
// cancellation slot, so nothing the caller does can stop it. If the caller's
// operation is cancelled meanwhile, the cancellation is remembered and
// reported only when the work ends: the caller then completes with
// `operation_aborted` instead of the work's own result. A caller that holds a
// gate lease across `co_await async_finish_worker(...)` therefore keeps its
// slot until the work is over, whatever happens to the caller; releasing
// earlier would admit new work while the old work still runs.
//
// The completion is dispatched on the handler's associated executor. A
// handler that may throw (a lease released in it can raise a broken core
// invariant) needs one: Asio's default, the system executor, calls
// std::terminate when a handler it runs throws.
#pragma once

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <memory>
#include <optional>
#include <utility>

namespace admit::gate {

namespace detail {

template <class Handler>
struct finish_state {
  explicit finish_state(Handler&& h) : handler(std::move(h)) {}
  finish_state(const finish_state&) = delete;
  ~finish_state() {
    if (handler) {  // the work's callback was dropped unrun (teardown)
      auto slot = boost::asio::get_associated_cancellation_slot(*handler);
      if (slot.is_connected()) slot.clear();
    }
  }

  void finish(boost::system::error_code ec) {
    auto slot = boost::asio::get_associated_cancellation_slot(*handler);
    if (slot.is_connected()) slot.clear();
    Handler h(std::move(*handler));
    handler.reset();
    if (cancel_requested) ec = boost::asio::error::operation_aborted;
    auto ex = boost::asio::get_associated_executor(h);
    boost::asio::dispatch(ex, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
  }

  std::optional<Handler> handler;
  bool cancel_requested = false;
};

struct remember_cancel {
  bool* flag;
  void operator()(boost::asio::cancellation_type_t type) {
    if (type != boost::asio::cancellation_type::none) *flag = true;
  }
};

struct initiate_finish_worker {
  template <class Handler, class StartWork>
  void operator()(Handler&& handler, StartWork&& start_work) const {
    using handler_t = std::decay_t<Handler>;
    // With the handler's associated allocator (by default Asio's recycling
    // allocator), as Asio allocates its own operations.
    auto alloc = boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>());
    auto st = std::allocate_shared<finish_state<handler_t>>(alloc, handler_t(std::forward<Handler>(handler)));
    auto slot = boost::asio::get_associated_cancellation_slot(*st->handler);
    if (slot.is_connected())
      slot.template emplace<remember_cancel>(remember_cancel{&st->cancel_requested});
    std::forward<StartWork>(start_work)(
        [st = std::move(st)](boost::system::error_code ec) mutable { st->finish(ec); });
  }
};

}  // namespace detail

template <class StartWork, class Token>
auto async_finish_worker(StartWork&& start_work, Token&& token) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
      detail::initiate_finish_worker{}, token, std::forward<StartWork>(start_work));
}

}  // namespace admit::gate
