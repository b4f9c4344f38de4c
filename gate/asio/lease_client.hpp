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
//            With `on_give_up` release, it first runs its release call
//            once (best effort, not retried, its outcome not reported): a
//            server that keeps waiters in line (`fair`) drops it at once
//            rather than at its queue timeout.
//   release  run the release script once; a failure is returned, not
//            retried — the lease's expiry is the backstop.
//   renew    (renewal variant) run the renew script; false means the lease
//            is already gone and the holder must stop.
// One token identifies one acquisition; every poll of it reuses the token.
//
// Protocols. With `lease_client_config::proto` set, the client runs that
// protocol (gate/redis/protocol.hpp) instead of a built-in variant: each
// operation is a whole Redis command it builds itself, EVALSHA of the
// operation's script with the protocol's KEYS and ARGV templates filled in
// (or the plain command a release may be), and the protocol's reply rule
// reads the answer. A NOSCRIPT answer (the server lost its script cache, as
// a restart does) is followed by one EVAL of the script's body, as script
// clients do. The backoff, the acquire timeout, the renewal interval and what
// a give-up does come from the configuration, which the caller fills from the
// protocol's client policy. With the policy's `wake_on` channel, a client
// waiting between attempts is subscribed to it through the transport
// (`subscribe(channel, on_message)` returns a subscription that ends when it
// is destroyed), and a message ends the wait early. With the policy's
// `acknowledge`, a grant counts only once replicas hold it: after an acquire
// that granted, the client sends `WAIT replicas timeout_ms` (a plain command
// through async_command); an integer answer >= replicas holds the permit.
// Fewer acknowledgements, an error reply or a lost call make the client
// release the permit once (best effort) and count the attempt as not
// granted: it backs off and polls again until the acquire timeout, the same
// token each time.
//
// Environment and transport. `Env` gives the executor, timer and monotonic
// clock (as for async_fifo_gate). `Transport` carries script calls to Redis:
//   template <class Token> auto async_script(redis::script_op, const script_request&, Token&&);
// completing with (error_code, redis::script_reply); an error code means the
// call may or may not have run on the server (a lost reply looks the same as
// a lost request). For protocols, also
//   template <class Token> auto async_command(const command_request&, Token&&);
// completing with (error_code, redis::reply): the server's RESP answer.
// The caller's wall clock (what `seed` passes as `now`, a protocol's
// {now_ms}) and the jitter source are functions given at construction.
//
// Quorum (a protocol whose client.quorum is "majority", over N independent
// nodes; Redlock's rule). The transport then also offers
//   std::size_t node_count() const;
//   template <class Token> auto async_command_on(std::size_t node, const command_request&, Token&&);
// An attempt runs the acquire on every node in turn (sequentially, as
// Redlock does: each call ends by its reply or the socket timeout), timing
// the whole round on the monotonic clock. The permit counts when at least
// N/2 + 1 nodes granted it (every node, for the rule "all") and the round
// left it valid:
//   validity = lease - elapsed - drift,  drift = lease / 100 + 2 ms
// (quorum_holds below). Otherwise the attempt releases the token on every
// node (a node that granted, or whose reply was lost, may hold it) and the
// client backs off and tries again until its acquire timeout. The release
// runs on every node; it reports an error when some node could not confirm
// it. A client whose protocol is not a quorum one keeps the plain path,
// call for call (async_command; node_count is never asked).
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/asio/gate_errc.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/protocol.hpp"
#include "gate/redis/sha1.hpp"

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

// Redlock's count and validity rule: a majority of `nodes` granted, and the
// lease outlived the round by more than the clock-drift margin. Every time
// in ns.
// `off_by_one` is broken on purpose (the mutation quorum_off_by_one): N/2.
// With `all` (the rule "all"), every node must grant.
inline std::int64_t quorum_of(std::int64_t nodes, bool off_by_one = false, bool all = false) noexcept {
  if (all) return nodes;
  return off_by_one ? nodes / 2 : nodes / 2 + 1;
}
inline std::int64_t quorum_drift_ns(std::int64_t lease_ns) noexcept { return lease_ns / 100 + 2'000'000; }
inline bool quorum_holds(std::int64_t nodes, std::int64_t granted, std::int64_t lease_ns, std::int64_t elapsed_ns,
                         bool off_by_one = false, bool all = false) noexcept {
  return granted >= quorum_of(nodes, off_by_one, all) && lease_ns - elapsed_ns - quorum_drift_ns(lease_ns) > 0;
}

struct lease_client_config {
  redis::variant var = redis::variant::seed;
  std::string key = "admitsim:inflight";
  std::int64_t limit = 1;
  std::int64_t lease_ms = 15'000;
  std::int64_t acquire_timeout_ns = 30'000'000'000;
  std::int64_t queue_timeout_ms = 0;  // fair, and a protocol's {queue_timeout_ms}
  backoff_policy backoff;
  std::int64_t renew_every_ns = 0;    // keep_renewed's interval (0: the client does not renew)
  // An acquire that gives up: stop polling, or release once first (redis::give_up_action).
  redis::give_up_action on_give_up = redis::give_up_action::stop;
  // The protocol to run; null: the built-in variant `var` (its typed calls).
  std::shared_ptr<const redis::protocol> proto;
  // A protocol's client.quorum "majority" or "all": acquire and release on every node of the transport.
  bool quorum = false;
  bool quorum_all = false;  // "all": every node must grant
  bool quorum_off_by_one = false;  // broken on purpose (mutation quorum_off_by_one)
};

// One protocol call as the transport sends it: the whole command
// ("EVALSHA", sha, numkeys, keys..., args... / "EVAL", body, ... / a plain
// command). `op` and `token` say what it is for, to a simulated server's
// monitors; a real transport sends `argv` only.
struct command_request {
  redis::script_op op = redis::script_op::acquire;
  const redis::protocol* proto = nullptr;
  std::string token;
  std::vector<std::string> argv;
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
        jitter_ns_(std::move(jitter_ns)) {
    // A quorum client needs a transport that reaches every node; without one it would send nothing.
    ADMIT_ASSERT(multi_node || !cfg_.quorum, "a quorum client's transport offers node_count and async_command_on");
    ADMIT_ASSERT(!cfg_.quorum || cfg_.proto, "a quorum client runs a protocol");
    if (cfg_.proto)
      for (const redis::protocol_script& s : cfg_.proto->scripts)
        shas_.push_back(s.sha.empty() ? redis::sha1_hex(s.source) : s.sha);
  }

  const lease_client_config& cfg() const noexcept { return cfg_; }

  // Whether the transport reaches several nodes (a quorum client's).
  static constexpr bool multi_node = requires(Transport& t) { t.node_count(); };

  awaitable<acquire_outcome> acquire(std::string token) {
    using boost::asio::as_tuple;
    const boost::asio::use_awaitable_t<executor_type> use;
    const std::int64_t deadline_ns = Env::now_ns(ex_) + cfg_.acquire_timeout_ns;
    acquire_outcome out;
    for (;;) {
      ++out.attempts;
      bool unreachable = false;
      if constexpr (multi_node) {
        if (cfg_.quorum) {
          const round r = co_await quorum_round(token);
          if (r.granted) {
            out.fence = r.fence;
            out.ec = {};
            co_return out;
          }
          unreachable = r.unreachable;
        }
      }
      if (!cfg_.quorum) {
        auto [ec, reply] = co_await call(redis::script_op::acquire, token);
        if (!ec && reply.granted() && cfg_.proto && cfg_.proto->client.acknowledge) {
          // The grant counts only once replicas hold it (see acknowledged).
          if (const boost::system::error_code not_acked = co_await acknowledged(token)) {
            ec = not_acked == gate_errc::unreachable ? not_acked : boost::system::error_code{};
            reply = redis::script_reply{};  // not granted
          }
        }
        if (!ec && reply.granted()) {
          out.fence = reply.value;
          out.ec = {};
          co_return out;
        }
        unreachable = static_cast<bool>(ec) || !reply.ok();
      }
      const std::int64_t now = Env::now_ns(ex_);
      if (now >= deadline_ns) {
        out.ec = unreachable ? gate_errc::unreachable : gate_errc::acquire_timeout;
        // Leave whatever the server keeps of this token (a place in line; a grant whose reply was lost), as the
        // acknowledge step does: once, best effort. Its failure changes nothing: the give-up stands either way.
        if (cfg_.on_give_up == redis::give_up_action::release) (void)co_await release(token);
        co_return out;
      }
      std::int64_t wait = cfg_.backoff.ceiling_ns(out.attempts);
      if (cfg_.backoff.exponential && cfg_.backoff.full_jitter) wait = jitter_ns_(wait);
      if (now + wait > deadline_ns) wait = deadline_ns - now;  // one last attempt at the deadline
      typename Env::timer_type t(ex_);
      Env::expires_at(t, now + wait);
      if (cfg_.proto && cfg_.proto->client.wake_on) {
        // Listen for a release while waiting: a message cancels the wait (the attempt comes at once).
        redis::call_values v;
        v.key = cfg_.key;
        v.token = token;
        v.limit = cfg_.limit;
        v.lease_ms = cfg_.lease_ms;
        v.queue_timeout_ms = cfg_.queue_timeout_ms;
        const std::string channel = redis::expand(*cfg_.proto->client.wake_on, v);
        [[maybe_unused]] const auto listening = transport_.subscribe(channel, [&t] { t.cancel(); });
        (void)co_await t.async_wait(as_tuple(use));
        continue;
      }
      co_await t.async_wait(use);
    }
  }

  awaitable<boost::system::error_code> release(std::string token) {
    if constexpr (multi_node) {
      if (cfg_.quorum) co_return co_await release_everywhere(token);
    }
    auto [ec, reply] = co_await call(redis::script_op::release, token);
    if (!ec && !reply.ok()) ec = gate_errc::unreachable;
    co_return ec;
  }

  // Renewal on the client's own timer: every renew_every_ns while `*holding`
  // stays true, renew `token`. Before each renewal `ready` (when given) may
  // hold the client (a paused process renews when it runs again). Completes
  // true once `*holding` is false (the work ended, or the holder is gone),
  // false when a renewal found the lease lost or Redis could not confirm it:
  // the caller then stops working under it, or not, by its policy.
  awaitable<bool> keep_renewed(std::string token, std::shared_ptr<const bool> holding,
                               std::function<awaitable<void>()> ready = {}) {
    const boost::asio::use_awaitable_t<executor_type> use;
    for (;;) {
      typename Env::timer_type t(ex_);
      Env::expires_at(t, Env::now_ns(ex_) + cfg_.renew_every_ns);
      co_await t.async_wait(use);
      if (!*holding) co_return true;
      if (ready) {
        co_await ready();
        if (!*holding) co_return true;
      }
      const bool kept = co_await renew(token);
      if (!*holding) co_return true;
      if (!kept) co_return false;
    }
  }

  // True while the lease is still ours; false when it was lost or Redis
  // could not confirm it (fail closed: stop working under it).
  awaitable<bool> renew(std::string token) {
    auto [ec, reply] = co_await call(redis::script_op::renew, token);
    co_return !ec && reply.granted();
  }

 private:
  // The acknowledge step after a granting acquire: WAIT <replicas> <timeout_ms>.
  // Empty: at least `replicas` replicas acknowledged, the permit is held.
  // Otherwise the permit is released once (best effort: its failure is not
  // retried, the lease's expiry is the backstop) and the error says why:
  // `acquire_timeout` for too few acknowledgements (the attempt reads as not
  // granted), `unreachable` for an error reply or a lost call.
  awaitable<boost::system::error_code> acknowledged(const std::string& token) {
    using boost::asio::as_tuple;
    const boost::asio::use_awaitable_t<executor_type> use;
    const redis::acknowledge_policy& ack = *cfg_.proto->client.acknowledge;
    command_request req;
    req.op = redis::script_op::acquire;  // part of the acquire, to a simulated server's monitors
    req.proto = cfg_.proto.get();
    req.token = token;
    req.argv = {"WAIT", std::to_string(ack.replicas), std::to_string(ack.timeout_ms)};
    auto [ec, answer] = co_await transport_.async_command(req, as_tuple(use));
    boost::system::error_code why;
    if (ec || answer.is_error() || answer.type != redis::reply::kind::integer)
      why = gate_errc::unreachable;
    else if (answer.integer < ack.replicas)
      why = gate_errc::acquire_timeout;
    else
      co_return why;
    (void)co_await release(token);
    co_return why;
  }

  // One quorum attempt: the acquire on every node in order, then the count
  // and validity rule; a round that does not hold releases on every node.
  struct round {
    bool granted = false;
    bool unreachable = false;  // fewer than a majority of nodes answered
    std::int64_t fence = 0;    // the first granting node's value
  };
  awaitable<round> quorum_round(const std::string& token) {
    const auto nodes = static_cast<std::int64_t>(transport_.node_count());
    const std::int64_t started_ns = Env::now_ns(ex_);
    std::int64_t granted = 0;
    std::int64_t answered = 0;
    round r;
    for (std::int64_t n = 0; n < nodes; ++n) {
      auto [ec, reply] = co_await call(redis::script_op::acquire, token, static_cast<std::size_t>(n));
      if (!ec && reply.ok()) ++answered;
      if (!ec && reply.granted() && granted++ == 0) r.fence = reply.value;
    }
    const std::int64_t elapsed_ns = Env::now_ns(ex_) - started_ns;
    if (quorum_holds(nodes, granted, cfg_.lease_ms * 1'000'000, elapsed_ns, cfg_.quorum_off_by_one, cfg_.quorum_all)) {
      r.granted = true;
      co_return r;
    }
    r.unreachable = answered < quorum_of(nodes, cfg_.quorum_off_by_one, cfg_.quorum_all);
    (void)co_await release_everywhere(token);
    co_return r;
  }

  awaitable<boost::system::error_code> release_everywhere(const std::string& token) {
    boost::system::error_code first;
    const std::size_t nodes = transport_.node_count();
    for (std::size_t n = 0; n < nodes; ++n) {
      auto [ec, reply] = co_await call(redis::script_op::release, token, n);
      if (!ec && !reply.ok()) ec = gate_errc::unreachable;
      if (ec && !first) first = ec;
    }
    co_return first;
  }

  // One operation: the built-in variant's typed call, or the protocol's command
  // (on node `node` of a quorum client's transport; npos: the one node).
  static constexpr std::size_t one_node = static_cast<std::size_t>(-1);
  template <class Request, class Token>
  auto send(std::size_t node, const Request& req, Token&& tok) {
    if constexpr (multi_node) {
      if (node != one_node) return transport_.async_command_on(node, req, std::forward<Token>(tok));
    }
    return transport_.async_command(req, std::forward<Token>(tok));
  }

  using call_result = std::tuple<boost::system::error_code, redis::script_reply>;

  // Not a coroutine itself: each path is its own, so that a built-in
  // variant's call (every poll of every waiting worker) keeps a small frame
  // rather than one with room for a protocol's command and its retry.
  awaitable<call_result> call(redis::script_op op, const std::string& token, std::size_t node = one_node) {
    if (!cfg_.proto) return builtin_call(op, token);
    return protocol_call(op, token, node);
  }

  awaitable<call_result> builtin_call(redis::script_op op, const std::string& token) {
    script_request req = request(token);
    if (op == redis::script_op::acquire) req.now_ms = wall_ms_();
    co_return co_await transport_.async_script(op, req,
                                               boost::asio::as_tuple(boost::asio::use_awaitable_t<executor_type>{}));
  }

  awaitable<call_result> protocol_call(redis::script_op op, const std::string& token, std::size_t node) {
    using boost::asio::as_tuple;
    const boost::asio::use_awaitable_t<executor_type> use;
    const redis::protocol_call& c = cfg_.proto->call(op);
    redis::call_values values;
    values.key = cfg_.key;
    values.token = token;
    values.limit = cfg_.limit;
    values.lease_ms = cfg_.lease_ms;
    values.now_ms = wall_ms_();
    values.queue_timeout_ms = cfg_.queue_timeout_ms;
    command_request req = command(op, c, values, true);
    auto [ec, answer] = co_await send(node, req, as_tuple(use));
    if (!ec && !c.is_command() && answer.is_error() && answer.text.rfind("NOSCRIPT", 0) == 0) {
      // The server has lost its script cache: send the body once.
      req = command(op, c, values, false);
      std::tie(ec, answer) = co_await send(node, req, as_tuple(use));
    }
    if (ec) co_return std::tuple{ec, redis::script_reply{}};
    co_return std::tuple{ec, redis::read_reply(answer, c.rule)};
  }

  command_request command(redis::script_op op, const redis::protocol_call& c, const redis::call_values& v,
                          bool by_sha) const {
    command_request req;
    req.op = op;
    req.proto = cfg_.proto.get();
    req.token = std::string(v.token);
    if (c.is_command()) {
      for (const redis::arg_template& t : c.command) req.argv.push_back(redis::expand(t, v));
      return req;
    }
    req.argv.reserve(3 + c.keys.size() + c.args.size());
    req.argv.emplace_back(by_sha ? "EVALSHA" : "EVAL");
    req.argv.push_back(by_sha ? shas_[c.script] : cfg_.proto->scripts[c.script].source);
    req.argv.push_back(std::to_string(c.keys.size()));
    for (const redis::arg_template& t : c.keys) req.argv.push_back(redis::expand(t, v));
    for (const redis::arg_template& t : c.args) req.argv.push_back(redis::expand(t, v));
    return req;
  }

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
  std::vector<std::string> shas_;  // per protocol script: the SHA-1 EVALSHA names it by
};

}  // namespace admit::gate
