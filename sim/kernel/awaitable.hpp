// Coroutine vocabulary for actors that run on the simulator.
//
// An actor is `sim::awaitable<T>`, i.e. asio::awaitable<T, sim_executor>;
// `co_await x.async_wait(sim::use_awaitable)` suspends it on virtual time.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "sim/kernel/sim_executor.hpp"
#include "sim/kernel/sim_timer.hpp"

namespace admit::sim {

template <class T = void>
using awaitable = boost::asio::awaitable<T, sim_executor>;

inline constexpr boost::asio::use_awaitable_t<sim_executor> use_awaitable{};

// Suspends the calling actor for `d_ns` of virtual time. Throws
// boost::system::system_error(operation_aborted) when cancelled.
inline awaitable<void> sleep_for(vtime_ns d_ns) {
  sim_timer t(co_await boost::asio::this_coro::executor);
  t.expires_after(d_ns);
  co_await t.async_wait(use_awaitable);
}

}  // namespace admit::sim
