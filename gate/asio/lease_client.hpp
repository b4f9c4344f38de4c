// lease_client: the fleet-wide lease semaphore's client side.
//
// Protocol (the design of the seed document, with options):
//   acquire  poll the acquire script until it grants, sleeping a backoff
//            between attempts (fixed, or exponential with full jitter),
//            until the acquire timeout measured on the caller's monotonic
//            clock. A Redis that cannot be reached counts as "not granted":
//            the client fails closed and never reports a permit it did not
//            see confirmed. It gives up with `acquire_timeout`, or with
//            `unreachable` when the last attempt could not reach Redis.
//   release  run the release script once; a failure is returned, not
//            retried — the lease's expiry is the backstop.
//   renew    (renewal variant) run the renew script; false means the lease
//            is already gone and the holder must stop.
// One token identifies one acquisition; every poll of it reuses the token.
//
// Environment and transport. `Env` gives the executor, timer and monotonic
// clock (as for async_fifo_gate). `Transport` carries script calls to Redis:
//   template <class Token> auto async_script(redis::script_op, const script_request&, Token&&);
// completing with (error_code, redis::script_reply); an error code means the
// call may or may not have run on the server (a lost reply looks the same as
// a lost request). The caller's wall clock (what `seed` passes as `now`) and
// the jitter source are functions given at construction.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "gate/asio/gate_errc.hpp"
#include "gate/redis/lease_scripts.hpp"

namespace admit::gate {

struct backoff_policy {
  bool exponential = false;
  std::int64_t delay_ns = 200'000'000;  // fixed
  std::int64_t base_ns = 50'000'000;    // exponential: first wait, doubled per attempt
  std::int64_t max_ns = 2'000'000'000;  // exponential: cap
  bool full_jitter = true;              // exponential: wait uniform in [0, computed]

  // The wait before attempt `attempt + 1` (attempt >= 1), before jitter.
  std::int64_t ceiling_ns(std::int64_t attempt) const noexcept {
    if (!exponential) return delay_ns;
    std::int64_t w = base_ns;
    for (std::int64_t i = 1; i < attempt && w < max_ns; ++i) w = w > max_ns / 2 ? max_ns : w * 2;
    return w < max_ns ? w : max_ns;
  }
};

struct lease_client_config {
  redis::variant var = redis::variant::seed;
  std::string key = "admitsim:inflight";
  std::int64_t limit = 1;
  std::int64_t lease_ms = 15'000;
  std::int64_t acquire_timeout_ns = 30'000'000'000;
  std::int64_t queue_timeout_ms = 0;  // fair
  backoff_policy backoff;
};

// One script call as the transport sees it. `key` views the client's
// configured key: valid while the client lives (a transport that keeps the
// request past the call copies it).
struct script_request {
  redis::variant var;
  std::string_view key;
  std::string token;
  std::int64_t now_ms = 0;  // caller's wall clock (seed)
  std::int64_t lease_ms = 0;
  std::int64_t limit = 0;
  std::int64_t queue_timeout_ms = 0;
};

struct acquire_outcome {
  boost::system::error_code ec;  // empty: granted
  std::int64_t fence = 0;        // the grant's value (the fencing number for `fencing`)
  std::int64_t attempts = 0;
};

template <class Env, class Transport>
class lease_client {
 public:
  using executor_type = typename Env::executor_type;
  template <class T>
  using awaitable = boost::asio::awaitable<T, executor_type>;

  lease_client(const executor_type& ex, Transport& transport, lease_client_config cfg,
               std::function<std::int64_t()> wall_ms, std::function<std::int64_t(std::int64_t)> jitter_ns)
      : ex_(ex), transport_(transport), cfg_(std::move(cfg)), wall_ms_(std::move(wall_ms)),
        jitter_ns_(std::move(jitter_ns)) {}

  const lease_client_config& cfg() const noexcept { return cfg_; }

  awaitable<acquire_outcome> acquire(std::string token) {
    using boost::asio::as_tuple;
    const boost::asio::use_awaitable_t<executor_type> use;
    const std::int64_t deadline_ns = Env::now_ns(ex_) + cfg_.acquire_timeout_ns;
    acquire_outcome out;
    for (;;) {
      ++out.attempts;
      script_request req = request(token);
      req.now_ms = wall_ms_();
      auto [ec, reply] = co_await transport_.async_script(redis::script_op::acquire, req, as_tuple(use));
      if (!ec && reply.granted()) {
        out.fence = reply.value;
        out.ec = {};
        co_return out;
      }
      const bool unreachable = static_cast<bool>(ec) || !reply.ok();
      const std::int64_t now = Env::now_ns(ex_);
      if (now >= deadline_ns) {
        out.ec = unreachable ? gate_errc::unreachable : gate_errc::acquire_timeout;
        co_return out;
      }
      std::int64_t wait = cfg_.backoff.ceiling_ns(out.attempts);
      if (cfg_.backoff.exponential && cfg_.backoff.full_jitter) wait = jitter_ns_(wait);
      if (now + wait > deadline_ns) wait = deadline_ns - now;  // one last attempt at the deadline
      typename Env::timer_type t(ex_);
      Env::expires_at(t, now + wait);
      co_await t.async_wait(use);
    }
  }

  awaitable<boost::system::error_code> release(std::string token) {
    const boost::asio::use_awaitable_t<executor_type> use;
    auto [ec, reply] =
        co_await transport_.async_script(redis::script_op::release, request(token), boost::asio::as_tuple(use));
    if (!ec && !reply.ok()) ec = gate_errc::unreachable;
    co_return ec;
  }

  // True while the lease is still ours; false when it was lost or Redis
  // could not confirm it (fail closed: stop working under it).
  awaitable<bool> renew(std::string token) {
    const boost::asio::use_awaitable_t<executor_type> use;
    auto [ec, reply] =
        co_await transport_.async_script(redis::script_op::renew, request(token), boost::asio::as_tuple(use));
    co_return !ec && reply.granted();
  }

 private:
  script_request request(const std::string& token) const {
    script_request r;
    r.var = cfg_.var;
    r.key = cfg_.key;
    r.token = token;
    r.lease_ms = cfg_.lease_ms;
    r.limit = cfg_.limit;
    r.queue_timeout_ms = cfg_.queue_timeout_ms;
    return r;
  }

  executor_type ex_;
  Transport& transport_;
  lease_client_config cfg_;
  std::function<std::int64_t()> wall_ms_;
  std::function<std::int64_t(std::int64_t)> jitter_ns_;
};

}  // namespace admit::gate
