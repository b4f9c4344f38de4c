// network: the links between the workers and the Redis node.
//
// One-way latency worker<->redis; partitions cut a link (two nodes) or a
// whole node for a while; a node that is down (restarting, failing over)
// answers nothing. A script call whose request or reply is lost ends at the
// client's socket timeout with an error — and may still have run on the
// server. A paused server runs what reaches it when the pause ends, so its
// effect lands even if the client gave up.
//
// The network carries a call; what the server does with it is the
// script_server's (the Redis side of the world). It publishes each call sent,
// each call that failed and each reply lost (facts.hpp).
#pragma once

#include <array>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/asio/lease_client.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/sim_executor.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/lease/redis_node.hpp"
#include "sim/world/lease_world.hpp"

namespace admit::world::lease {

// What runs a call that reached the Redis node.
class script_server {
 public:
  // A protocol's whole command (EVALSHA, EVAL or a plain command): the server's RESP answer.
  virtual redis::reply execute_command(std::size_t wi, const gate::command_request& req) = 0;
  // The mutant check_then_add: the add, one round trip after the count that `req` was.
  virtual void add_after_check(std::size_t wi, const gate::command_request& req) = 0;

 protected:
  ~script_server() = default;
};

class network;

// Carries one worker's script calls to the Redis node over the simulated network
// (node 0's network, `net`; a quorum client reaches node n through nets[n]).
struct redis_transport {
  network* net;
  std::size_t worker;
  network* const* nets = nullptr;  // every node's network, in node order (the world's)
  std::size_t nodes = 1;
  template <class Token>
  auto async_command(const gate::command_request& req, Token&& token);
  std::size_t node_count() const noexcept { return nodes; }
  template <class Token>
  auto async_command_on(std::size_t node, const gate::command_request& req, Token&& token);

  // The worker listens on `channel` (a shard channel when `sharded`: SSUBSCRIBE) while the returned
  // subscription lives.
  class subscription {
   public:
    subscription(network* net, std::size_t worker, std::string channel, bool sharded) noexcept
        : net_(net), worker_(worker), channel_(std::move(channel)), sharded_(sharded) {}
    subscription(subscription&& o) noexcept
        : net_(std::exchange(o.net_, nullptr)), worker_(o.worker_), channel_(std::move(o.channel_)),
          sharded_(o.sharded_) {}
    subscription(const subscription&) = delete;
    subscription& operator=(const subscription&) = delete;
    subscription& operator=(subscription&&) = delete;
    ~subscription();

   private:
    network* net_;
    std::size_t worker_;
    std::string channel_;
    bool sharded_;
  };
  subscription subscribe(std::string channel, bool sharded, std::function<void()> on_message);
};

class network {
 public:
  // `split_add`: acquires are the mutant's two round trips (count, then add).
  network(sim::scheduler& sched, const redis_node& node, script_server& server, fact_bus& facts,
          std::size_t workers, bool split_add);

  // Always inline: every hop of a call asks, from large template bodies
  // where GCC would otherwise call it out of line; the cut scan is out of line.
  [[gnu::always_inline]] bool link_up(std::size_t wi) const {
    if (node_.down(sched_.now_ns())) return false;
    if (cuts_.empty()) return true;
    return !cut_between(worker_names_[wi], "redis");
  }

  // A partition until `until_ns`: of the link a-b, or of the whole node a (b empty).
  void cut(std::string a, std::string b, vtime_ns until_ns) {
    cuts_.push_back(cut_spec{std::move(a), std::move(b), until_ns});
  }

  template <class Handler>
  void start_command(std::size_t wi, const gate::command_request& request, Handler handler);

  // --- pub/sub ----------------------------------------------------------------
  // PUBLISH and SPUBLISH as the node runs them (redis::pubsub): the receivers
  // are the workers subscribed now to that channel of that namespace; each
  // gets the message one latency later if its link is up and it is still
  // subscribed then (a message is never queued for a worker cut off).
  class bus final : public redis::pubsub {
   public:
    explicit bus(network& net) : net_(net) {}
    std::int64_t publish(std::string_view channel, std::string_view message, bool sharded) override;

   private:
    network& net_;
  };
  bus& pubsub() noexcept { return bus_; }
  // Broken on purpose (lease_run_options::wait_acks_at_once): WAIT answers at once with what it asked for.
  void set_wait_acks_at_once(bool on) noexcept { wait_acks_at_once_ = on; }
  void listen(std::string channel, bool sharded, std::size_t wi, std::function<void()> on_message);
  void stop_listening(const std::string& channel, bool sharded, std::size_t wi);
  // At the world's end, before the scheduler's own pending tasks go: drops the calls with no timeout that
  // never ended (their clients wait for ever), with their handlers.
  void drop_unbounded_calls() noexcept { unbounded_.clear(); }

 private:
  // One call in flight: the client's handler, the request, the reply on its
  // way back. Shared by the delivery, the reply and the timeout (call_ref); a
  // world runs on one thread, so the count needs no atomics. A call carries
  // the protocol's command (its argv) and the RESP reply.
  template <class Handler, class Request, class Reply>
  struct call_state {
    std::optional<Handler> h;
    std::size_t worker = 0;  // the calling worker's index
    redis::script_op op = redis::script_op::acquire;  // what the call is for
    bool done = false;
    sim::timer_handle timeout;
    std::uint32_t refs = 0;
    // A call with no timeout: its key in unbounded_ while it runs.
    std::optional<std::uint64_t> unbounded;
    Request req;
    Reply reply;
  };
  template <class State>
  class call_ref {
   public:
    explicit call_ref(State* s) noexcept : p_(s) { ++p_->refs; }
    call_ref(const call_ref& o) noexcept : p_(o.p_) { ++p_->refs; }
    call_ref(call_ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    call_ref& operator=(const call_ref&) = delete;
    call_ref& operator=(call_ref&&) = delete;
    ~call_ref() {
      if (p_ && --p_->refs == 0) delete p_;
    }
    State* operator->() const noexcept { return p_; }
    State* get() const noexcept { return p_; }

   private:
    State* p_;
  };
  template <class Handler>
  using command_call = call_state<Handler, gate::command_request, redis::reply>;

  struct cut_spec {
    std::string a, b;  // node names; b empty: the whole node a
    vtime_ns until_ns;
  };

  bool cut_between(const std::string& a, const std::string& b) const;
  // A reply that ran on the server but cannot reach its worker.
  [[gnu::noinline]] void reply_lost(std::size_t wi) {
    facts_.publish(fact::reply_lost{wi, node_.down(sched_.now_ns())});
  }

  template <class State, class Reply>
  void complete_call(const call_ref<State>& st, boost::system::error_code ec, const Reply& reply);
  // A crash of the calling process (its loop's terminal cancellation, which
  // reaches the call through its handler's cancellation slot) ends the call at
  // once, as the process's closed socket does: a request already sent may
  // still run on the server, but its reply reaches no one, and the crashed
  // generation's client sends nothing more. The call completes with
  // operation_aborted at the current instant, as an event of its own (never
  // inside the crash's event), so the crashed coroutine unwinds before any
  // restart (a crash's downtime is at least 1ns).
  template <class State, class Reply>
  struct cancel_call {
    network* net;
    State* st;  // alive while this handler is installed: complete_call clears the slot first
    void operator()(boost::asio::cancellation_type_t) const {
      call_ref<State> ref(st);
      net->sched_.schedule_after(0, [net = net, ref] {
        net->complete_call(ref, boost::asio::error::operation_aborted, Reply{});
      });
    }
  };
  template <class Reply, class State>
  void arm_cancel(const call_ref<State>& st) {
    auto slot = boost::asio::get_associated_cancellation_slot(*st->h);
    if (slot.is_connected()) slot.template emplace<cancel_call<State, Reply>>(cancel_call<State, Reply>{this, st.get()});
  }
  template <class Handler>
  void deliver_command(std::size_t wi, const call_ref<command_call<Handler>>& st);
  template <class Handler>
  void wait_command(std::size_t wi, const call_ref<command_call<Handler>>& st);
  // The lease client's acknowledge step (an acquire is otherwise always a script call).
  static bool is_wait(const gate::command_request& req) noexcept {
    return req.op == redis::script_op::acquire && !req.argv.empty() && req.argv.front() == "WAIT";
  }

  sim::scheduler& sched_;
  const redis_node& node_;
  script_server& server_;
  fact_bus& facts_;
  // The calls with no timeout (a protocol's "timeout": "none") still running, by the order they started: a
  // call whose request or reply is lost is held by nothing else (no timeout task holds it), and its client
  // waits on it until the world ends. Erased as each ends.
  std::map<std::uint64_t, sim::unique_task> unbounded_;
  std::uint64_t next_unbounded_ = 0;
  std::vector<std::string> worker_names_;  // "worker:<index>", as partitions name them
  std::vector<cut_spec> cuts_;
  bool split_add_;
  bool wait_acks_at_once_ = false;
  // Subscribers by channel, by worker (ordered: a PUBLISH delivers in worker order): [0] the channels of
  // PUBLISH and SUBSCRIBE, [1] the shard channels of SPUBLISH and SSUBSCRIBE.
  using listener_map = std::map<std::string, std::map<std::size_t, std::function<void()>>, std::less<>>;
  std::array<listener_map, 2> listeners_;
  bus bus_{*this};
};

template <class Handler>
void network::start_command(std::size_t wi, const gate::command_request& request, Handler handler) {
  call_ref<command_call<Handler>> st(new command_call<Handler>);
  ADMIT_ASSERT(wi < worker_names_.size(), "a call of one of the fleet's workers");
  st->h.emplace(std::move(handler));
  st->worker = wi;
  st->req = request;
  st->op = request.op;
  facts_.publish(fact::call_sent{wi, request.op});
  // A blocking WAIT: the client's socket timeout runs past the time WAIT may block, as clients of
  // blocking commands set it.
  // The protocol's call timeout (0: none, the client waits for ever; -1: the usual socket timeout).
  ADMIT_ASSERT(request.timeout_ns >= -1, "a call's timeout is -1, 0 or a duration");
  const vtime_ns call_timeout_ns = request.timeout_ns < 0 ? redis_call_timeout_ns : request.timeout_ns;
  const vtime_ns socket_timeout_ns =
      is_wait(request) ? redis_call_timeout_ns + std::stoll(request.argv.at(2)) * sim::ms : call_timeout_ns;
  if (socket_timeout_ns > 0) {
    st->timeout = sched_.schedule_after(socket_timeout_ns, [this, st] {
      complete_call(st, boost::asio::error::timed_out, redis::reply{});
    });
  } else {
    st->unbounded = next_unbounded_++;
    unbounded_.emplace(*st->unbounded, sim::unique_task([st] {}));
  }
  arm_cancel<redis::reply>(st);
  if (!link_up(wi)) return;  // the request is lost; the client waits for its socket timeout
  sched_.schedule_after(redis_latency_ns, [this, wi, st] { deliver_command(wi, st); });
}

template <class State, class Reply>
void network::complete_call(const call_ref<State>& st, boost::system::error_code ec, const Reply& reply) {
  if (st->done) return;  // the reply and the socket timeout race: the first one ends the call
  ADMIT_ASSERT(st->h.has_value(), "a call's handler is called once, when the call first ends");
  st->done = true;
  sched_.cancel(st->timeout);
  if (st->unbounded) unbounded_.erase(*st->unbounded);  // the caller's reference keeps it alive here
  // A call ended by its process's crash is no error of Redis's.
  if (ec && ec != boost::asio::error::operation_aborted) facts_.publish(fact::call_failed{st->worker});
  facts_.publish(fact::call_ended{st->worker, st->op});
  auto slot = boost::asio::get_associated_cancellation_slot(*st->h);
  if (slot.is_connected()) slot.clear();
  auto h(std::move(*st->h));
  st->h.reset();
  auto ex = boost::asio::get_associated_executor(h, sched_.get_executor());
  boost::asio::dispatch(ex, [h = std::move(h), ec, reply]() mutable { std::move(h)(ec, reply); });
}

template <class Handler>
void network::deliver_command(std::size_t wi, const call_ref<command_call<Handler>>& st) {
  if (!link_up(wi)) return;
  if (sched_.now_ns() < node_.paused_until()) {
    // A paused server runs the command late: its effect lands even if the client gave up.
    sched_.schedule_at(node_.paused_until(), [this, wi, st] { deliver_command(wi, st); });
    return;
  }
  if (st->done) [[unlikely]]
    facts_.publish(fact::ran_late{wi});  // its client already gave up on it
  if (is_wait(st->req)) [[unlikely]] {
    wait_command(wi, st);
    return;
  }
  st->reply = server_.execute_command(wi, st->req);
  if (split_add_ && st->req.op == redis::script_op::acquire) [[unlikely]] {
    if (redis::read_reply(st->reply, st->req.proto->acquire.rule).granted()) {
      // Broken on purpose: the count came back below the limit; the add is a
      // second round trip, and others may add in between.
      sched_.schedule_after(2 * redis_latency_ns, [this, wi, st] {
        if (!link_up(wi)) return;
        server_.add_after_check(wi, st->req);
        st->reply = redis::reply::from_integer(1);
        sched_.schedule_after(redis_latency_ns, [this, wi, st] {
          if (link_up(wi)) complete_call(st, {}, st->reply);
        });
      });
      return;
    }
  }
  sched_.schedule_after(redis_latency_ns, [this, wi, st] {
    if (link_up(wi))
      complete_call(st, {}, st->reply);
    else
      reply_lost(wi);
  });
}

template <class Handler>
void network::wait_command(std::size_t wi, const call_ref<command_call<Handler>>& st) {
  // WAIT numreplicas timeout_ms (the lease client's acknowledge step, whose
  // arguments it builds itself): it blocks on the node until the follower has
  // applied every write made so far, or until its timeout; then the reply
  // travels back. A restart or failover while it blocks loses it (the client's
  // socket timeout ends the call).
  const std::vector<std::string>& argv = st->req.argv;
  ADMIT_ASSERT(argv.size() == 3, "WAIT numreplicas timeout");
  const std::int64_t wanted = std::stoll(argv[1]);
  const std::int64_t timeout_ms = std::stoll(argv[2]);
  ADMIT_ASSERT(wanted >= 1, "the acknowledge policy waits for one replica or more");
  redis_node::wait_outcome w = node_.wait_for_replica(sched_.now_ns(), timeout_ms * sim::ms);
  if (wait_acks_at_once_) [[unlikely]]
    w = redis_node::wait_outcome{sched_.now_ns(), wanted};
  const std::uint64_t generation = node_.generation();
  // The world has one follower: no WAIT counts more than one acknowledgement (but the broken option's).
  st->reply = redis::reply::from_integer(w.acks);
  sched_.schedule_at(w.answer_at_ns, [this, wi, st, generation] {
    if (node_.generation() != generation) {
      reply_lost(wi);
      return;
    }
    sched_.schedule_after(redis_latency_ns, [this, wi, st] {
      if (link_up(wi))
        complete_call(st, {}, st->reply);
      else
        reply_lost(wi);
    });
  });
}

template <class Token>
auto redis_transport::async_command(const gate::command_request& req, Token&& token) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code, redis::reply)>(
      [this, r = &req](auto handler) { net->start_command(worker, *r, std::move(handler)); }, token);
}

template <class Token>
auto redis_transport::async_command_on(std::size_t node, const gate::command_request& req, Token&& token) {
  ADMIT_ASSERT(node < nodes, "a quorum call names one of the world's nodes");
  network* n = nodes == 1 ? net : nets[node];
  return boost::asio::async_initiate<Token, void(boost::system::error_code, redis::reply)>(
      [this, n, r = &req](auto handler) { n->start_command(worker, *r, std::move(handler)); }, token);
}

inline redis_transport::subscription::~subscription() {
  if (net_ != nullptr) net_->stop_listening(channel_, sharded_, worker_);
}

inline redis_transport::subscription redis_transport::subscribe(std::string channel, bool sharded,
                                                                std::function<void()> on_message) {
  net->listen(channel, sharded, worker, std::move(on_message));
  return subscription{net, worker, std::move(channel), sharded};
}

}  // namespace admit::world::lease
