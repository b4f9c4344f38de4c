// lease_client: the fleet-wide lease semaphore's client, as an Asio driver of
// the sans-IO core (gate/lease/client_core.hpp), which holds the whole
// protocol: the acquire's attempts, backoff, deadline, NOSCRIPT fallback,
// acknowledge step and quorum rounds; the release; the renewal. This driver
// only carries out the core's steps: it sends the command through the
// transport and feeds the answer back, it
// waits on a timer (subscribed to the wake-up channel when the protocol has
// one), and it reads the clocks for every input. The same driver runs on the
// simulator's executor (sim/world/lease) and on a real io_context over a real
// Redis (resp_transport.hpp).
//
// Environment and transport. `Env` gives the executor, timer and monotonic
// clock (as for async_fifo_gate). `Transport` carries calls to Redis:
//   template <class Token> auto async_command(const command_request&, Token&&);
// completing with (error_code, redis::reply): the server's RESP answer; an
// error code means the call may or may not have run on the server (a lost
// reply looks the same as a lost request). For a protocol with a
// `wake_on` channel, `subscribe(channel, sharded, on_message)` returns a
// subscription that ends when it is destroyed (`sharded`: a shard channel, SSUBSCRIBE). For a quorum protocol (client.quorum
// "majority" or "all", over N independent nodes), also
//   std::size_t node_count() const;
//   template <class Token> auto async_command_on(std::size_t node, const command_request&, Token&&);
// The caller's wall clock (a protocol's {now_ms}) and the jitter source are functions given at construction.
//
// Outcomes. acquire completes with an empty error code and the grant's value
// (the fencing number for `fencing`), or gate_errc::acquire_timeout, or
// gate_errc::unreachable (fail closed: a permit is reported only when Redis
// confirmed it). release completes with the error of its lost call, or
// gate_errc::unreachable for an error reply; it is not retried (the lease's
// expiry is the backstop). renew completes true while the lease is still
// ours. keep_renewed renews on the client's own timer while the holder works.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/asio/gate_errc.hpp"
#include "gate/lease/client_config.hpp"
#include "gate/lease/client_core.hpp"
#include "gate/lease/remote_logic.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/protocol.hpp"

namespace admit::gate {

struct acquire_outcome {
  boost::system::error_code ec;  // empty: granted
  std::int64_t fence = 0;        // the grant's value (the fencing number for `fencing`)
  std::int64_t attempts = 0;
  std::string token;             // the token the acquire ended under (a fresh one after a lost attempt, by policy)
};

template <class Env, class Transport>
class lease_client {
 public:
  using executor_type = typename Env::executor_type;
  template <class T>
  using awaitable = boost::asio::awaitable<T, executor_type>;

  // Whether the transport reaches several nodes (a quorum client's).
  static constexpr bool multi_node = requires(Transport& t) { t.node_count(); };
  // Whether the transport can listen on a pub/sub channel (a protocol's wake_on).
  static constexpr bool can_listen =
      requires(Transport& t) { t.subscribe(std::string{}, bool{}, std::function<void()>{}); };

  lease_client(const executor_type& ex, Transport& transport, lease_client_config cfg,
               std::function<std::int64_t()> wall_ms, std::function<std::int64_t(std::int64_t)> jitter_ns)
      : ex_(ex), transport_(transport), wall_ms_(std::move(wall_ms)),
        core_(std::move(cfg), std::move(jitter_ns)) {
    // A quorum client needs a transport that reaches every node; without one it would send nothing.
    ADMIT_ASSERT(multi_node || !core_.cfg().quorum, "a quorum client's transport offers node_count and async_command_on");
    // A protocol is the user's: one that needs what the transport cannot do is refused, not asserted.
    if (!can_listen && core_.cfg().proto && core_.cfg().proto->client.wake_on)
      throw std::invalid_argument("the protocol \"" + core_.cfg().proto->name +
                                  "\" wakes waiters on a pub/sub channel (client.wake_on), which this transport "
                                  "cannot listen on");
  }

  const lease_client_config& cfg() const noexcept { return core_.cfg(); }

  // From now on the client's operations run on `logic` (a client in a child process) instead of its own
  // core; the core keeps the configuration (renewal timing). `logic` outlives the client's operations.
  void set_remote(remote_logic* logic) noexcept { remote_ = logic; }

  // Told what each answer to an acquire call read as (client_core::op::last_reading), as the answer
  // comes: a real run's liveness watch (sim/confirm/real_run.cpp). A remote client's answers are not told.
  using reading = client_core::op::reading;
  void on_reading(std::function<void(reading)> observer) { observer_ = std::move(observer); }

  awaitable<acquire_outcome> acquire(std::string token) {
    boost::system::error_code lost;
    acquire_outcome out;
    lease_step done;
    if (remote_ != nullptr) [[unlikely]] {
      remote_op op(*remote_, client_core::op_kind::acquire, std::move(token));
      done = co_await drive(op, lost);
      out.token = op.token();
    } else {
      client_core::op op(core_, client_core::op_kind::acquire, std::move(token), nodes());
      done = co_await drive(op, lost);
      out.token = op.token();
    }
    out.ec = error_of(done.failure, lost);
    out.fence = done.value;
    out.attempts = done.attempts;
    co_return out;
  }

  awaitable<boost::system::error_code> release(std::string token) {
    boost::system::error_code lost;
    lease_step done;
    if (remote_ != nullptr) [[unlikely]] {
      remote_op op(*remote_, client_core::op_kind::release, std::move(token));
      done = co_await drive(op, lost);
    } else {
      client_core::op op(core_, client_core::op_kind::release, std::move(token), nodes());
      done = co_await drive(op, lost);
    }
    co_return error_of(done.failure, lost);
  }

  // The protocol's set-up calls, in order, as a deployment (or a client on
  // reconnect) runs them before anyone acquires: completes with an empty
  // error code, or gate_errc::unreachable (an error reply; the error of a
  // lost call), or gate_errc::setup_not_done.
  awaitable<boost::system::error_code> setup() {
    ADMIT_ASSERT(remote_ == nullptr, "a remote client runs its own set-up, if any, inside its operations");
    client_core::op op(core_, client_core::op_kind::setup, std::string{}, 1);
    boost::system::error_code lost;
    const lease_step done = co_await drive(op, lost);
    if (done.failure == lease_failure::unreachable && lost) co_return lost;
    co_return error_of(done.failure, lost);
  }

  // True while the lease is still ours; false when it was lost or Redis
  // could not confirm it (fail closed: stop working under it).
  awaitable<bool> renew(std::string token) {
    boost::system::error_code lost;
    lease_step done;
    if (remote_ != nullptr) [[unlikely]] {
      remote_op op(*remote_, client_core::op_kind::renew, std::move(token));
      done = co_await drive(op, lost);
    } else {
      client_core::op op(core_, client_core::op_kind::renew, std::move(token), nodes());
      done = co_await drive(op, lost);
    }
    co_return done.value != 0;
  }

  // Renewal on the client's own timer: while `*holding` stays true, renew
  // `token` every renew_every_ns (after each answer, or from the start at a
  // fixed rate: core's next_renewal_ns). Before each renewal `ready` (when given) may
  // hold the client (a paused process renews when it runs again). Completes
  // true once `*holding` is false (the work ended, or the holder is gone),
  // false when a renewal found the lease lost or Redis could not confirm it:
  // the caller then stops working under it, or not, by its policy.
  awaitable<bool> keep_renewed(std::string token, std::shared_ptr<const bool> holding,
                               std::function<awaitable<void>()> ready = {}) {
    const boost::asio::use_awaitable_t<executor_type> use;
    std::int64_t due = core_.first_renewal_ns(Env::now_ns(ex_));
    for (;;) {
      typename Env::timer_type t(ex_);
      Env::expires_at(t, due);
      co_await t.async_wait(use);
      if (!*holding) co_return true;
      if (ready) {
        co_await ready();
        if (!*holding) co_return true;
      }
      const bool kept = co_await renew(token);
      if (!*holding) co_return true;
      if (!kept) co_return false;
      due = core_.next_renewal_ns(due, Env::now_ns(ex_));
    }
  }

 private:
  // The nodes an operation starting now runs on. A client whose protocol is not a quorum one never asks
  // the transport.
  std::size_t nodes() const {
    if constexpr (multi_node) {
      if (core_.cfg().quorum) return transport_.node_count();
    }
    return 1;
  }

  moment now() const { return moment{Env::now_ns(ex_), wall_ms_()}; }

  static boost::system::error_code error_of(lease_failure f, const boost::system::error_code& lost) {
    switch (f) {
      case lease_failure::none: return {};
      case lease_failure::acquire_timeout: return gate_errc::acquire_timeout;
      case lease_failure::unreachable: return gate_errc::unreachable;
      case lease_failure::lost: ADMIT_ASSERT(lost, "a lost call completed with an error"); return lost;
      case lease_failure::not_done: return gate_errc::setup_not_done;
    }
    return gate_errc::unreachable;
  }

  // Carries out the operation's steps until it is done. `lost` keeps the
  // error of its first call that completed with one.
  // `Op` is client_core::op or remote_op.
  template <class Op>
  awaitable<lease_step> drive(Op& op, boost::system::error_code& lost) {
    using boost::asio::as_tuple;
    const boost::asio::use_awaitable_t<executor_type> use;
    lease_step s = op.start(now());
    for (;;) {
      switch (s.k) {
        case lease_step::kind::command: {
          auto [ec, answer] = co_await send(s.node, op.command(), as_tuple(use));
          if (ec && !lost) lost = ec;
          s = op.replied(now(), static_cast<bool>(ec), answer);
          if constexpr (std::is_same_v<Op, client_core::op>) {
            if (observer_ && op.last_reading() != reading::none) observer_(op.last_reading());
          }
          break;
        }
        case lease_step::kind::wait: {
          typename Env::timer_type t(ex_);
          Env::expires_at(t, s.until_ns);
          if (s.wake) {
            ADMIT_ASSERT(can_listen, "a client whose transport cannot listen refused a wake_on protocol");
            if constexpr (can_listen) {
              // A message cancels the wait: the attempt comes at once.
              [[maybe_unused]] const auto listening = transport_.subscribe(op.wake_channel(), op.wake_sharded(), [&t] { t.cancel(); });
              (void)co_await t.async_wait(as_tuple(use));
            }
          } else {
            co_await t.async_wait(use);
          }
          s = op.woke(now());
          break;
        }
        case lease_step::kind::done:
          co_return s;
      }
    }
  }

  // A command to node `node` of a quorum client's transport, or (one_node) to the one node.
  template <class Token>
  auto send(std::size_t node, const command_request& req, Token&& tok) {
    if constexpr (multi_node) {
      if (node != lease_step::one_node) return transport_.async_command_on(node, req, std::forward<Token>(tok));
    }
    ADMIT_ASSERT(node == lease_step::one_node, "a call to one node of several goes through a quorum transport");
    return transport_.async_command(req, std::forward<Token>(tok));
  }

  executor_type ex_;
  Transport& transport_;
  std::function<std::int64_t()> wall_ms_;
  client_core core_;
  remote_logic* remote_ = nullptr;
  std::function<void(reading)> observer_;
};

}  // namespace admit::gate
