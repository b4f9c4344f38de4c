#include "sim/world/lease_world.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <charconv>
#include <deque>
#include <map>
#include <memory>
#include <optional>

#include "gate/asio/lease_client.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/replica.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/sim_env.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/idle_set.hpp"
#include "sim/world/run_guard.hpp"

namespace admit::world {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

redis::variant to_redis(scenario::lease_variant v) {
  switch (v) {
    case scenario::lease_variant::seed: return redis::variant::seed;
    case scenario::lease_variant::server_time: return redis::variant::server_time;
    case scenario::lease_variant::renewal: return redis::variant::renewal;
    case scenario::lease_variant::fencing: return redis::variant::fencing;
    case scenario::lease_variant::fair: return redis::variant::fair;
  }
  return redis::variant::seed;
}

enum lease_inv : std::size_t { l_gate_inflight, l_portal_inflight, l_token_once, l_expiry, l_liveness, l_count };
constexpr const char* lease_invariant_names[l_count] = {"gate_inflight_le_cap", "portal_inflight_le_cap",
                                                        "token_granted_once", "expired_leases_reaped", "liveness"};
// Every row of the invariant table that applies to the lease world, and nothing else.
static_assert([] {
  std::size_t n = 0;
  for (const auto& row : check::invariant_table) n += (row.worlds & check::world_lease) != 0;
  if (n != l_count) return false;
  for (const char* name : lease_invariant_names)
    if (!check::applies(name, check::world_lease)) return false;
  return true;
}());

enum lease_probe : std::size_t {
  lp_refused_at_limit,
  lp_granted_after_backoff,
  lp_deferred,
  lp_deferred_unreachable,
  lp_lost_reply,
  lp_reaped_live,
  lp_failed_release,
  lp_renewal_lost,
  lp_crash_while_holding,
  lp_portal_429,
  lp_client_read_timeout,
  lp_count,
};
constexpr const char* lease_probe_names[lp_count] = {
    "acquire refused at the limit",
    "granted after backing off",
    "item deferred at the acquire timeout",
    "item deferred: Redis unreachable",
    "a script ran but its reply was lost",
    "lease reaped while its holder worked",
    "release failed (expiry is the backstop)",
    "renewal found the lease gone",
    "crash while holding a permit",
    "portal answered 429",
    "client read timeout at the portal",
};

struct work_item {
  std::uint64_t number = 0;
  vtime_ns arrived_ns = 0;
  vtime_ns service_ns = 0;
  vtime_ns read_timeout_ns = 0;
};

struct worker_crashed {};

class lease_world;

// Carries one worker's script calls to the Redis node over the simulated network.
struct redis_transport {
  lease_world* world;
  std::size_t worker;
  template <class Token>
  auto async_script(redis::script_op op, const gate::script_request& req, Token&& token);
};

using client_t = gate::lease_client<sim::sim_env, redis_transport>;

struct worker_state {
  std::size_t index = 0;
  std::string node;  // its name in partitions: "worker:<index>"
  std::uint64_t generation = 0;
  bool alive = true;
  bool started = false;  // this generation's worker loop has run its first step
  vtime_ns paused_until = 0;
  scenario::clock_spec clock;
  vtime_ns step_ns = 0;
  std::unique_ptr<redis_transport> transport;
  std::unique_ptr<client_t> client;
  std::unique_ptr<asio::cancellation_signal> kill;
  // The idle worker loop's wait for work: its completion handler, run with
  // operation_aborted by wake().
  sim::unique_task resume;
  bool idle = false;
  std::optional<std::string> holding;   // token of the permit it believes it holds
  std::optional<work_item> current;     // the item it works on
  sim::prng jitter{0};
};

// A script call inside the world: a gate::script_request whose key views the
// world's one gate key (every client's key), so that carrying it across the
// network copies no key.
struct call_req {
  redis::variant var;
  std::string_view key;
  std::string token;
  std::int64_t now_ms = 0;
  std::int64_t lease_ms = 0;
  std::int64_t limit = 0;
  std::int64_t queue_timeout_ms = 0;
};

struct logged_op {
  vtime_ns at_ns;
  std::int64_t server_now_us;
  redis::script_op op;
  call_req req;
};

struct cut {
  std::string a, b;  // node names; b empty: the whole node a
  vtime_ns until_ns;
};

class lease_world {
 public:
  lease_world(const scenario::scenario& sc, std::uint64_t seed, scenario::lease_variant v, const lease_run_options& opts)
      : sc_(sc), gate_(sc.gates.front()), var_(to_redis(v)), timeline_(opts.timeline),
        guard_(sc.checks.max_events, sc.checks.max_wall_ns), service_rng_(sim::substream(seed, "service")),
        src_(sc, seed) {
    rec_.seed = seed;
    rec_.variant = scenario::lease_variant_names[static_cast<std::size_t>(v)];
    rec_.lease.emplace();
    for (const char* n : lease_probe_names) rec_.probes.emplace_back(n, 0);
    for (std::size_t i = 0; i < l_count; ++i) {
      invariant_result r;
      r.name = lease_invariant_names[i];
      r.enabled = sc.checks.invariants.empty() ||
                  std::find(sc.checks.invariants.begin(), sc.checks.invariants.end(), r.name) !=
                      sc.checks.invariants.end();
      rec_.invariants.push_back(r);
    }
    const scenario::lease_params& lp = gate_.lease;
    cfg_.var = var_;
    cfg_.key = lp.key;
    cfg_.limit = lp.limit;
    cfg_.lease_ms = lp.lease_ns / sim::ms;
    cfg_.acquire_timeout_ns = lp.acquire_timeout_ns;
    cfg_.queue_timeout_ms = lp.queue_timeout_ns ? *lp.queue_timeout_ns / sim::ms : 2 * cfg_.lease_ms;
    cfg_.backoff.exponential = lp.backoff.k == scenario::backoff_spec::kind::exponential;
    cfg_.backoff.delay_ns = lp.backoff.delay_ns;
    cfg_.backoff.base_ns = lp.backoff.base_ns;
    cfg_.backoff.max_ns = lp.backoff.max_ns;
    cfg_.backoff.full_jitter = lp.backoff.jit == scenario::backoff_spec::jitter::full;
    portal_cap_ = sc.service.portal_cap.value_or(lp.limit);
    read_timeout_default_ = sc.service.client_timeout_ns.value_or(default_portal_read_timeout_ns);
    trace_cap_ = opts.trace ? static_cast<std::size_t>(sc.checks.trace_capacity) : 0;
    for (const auto& f : sc.faults.schedule) {
      if (f.kind == scenario::fault_kind::redis_failover) max_lag_ns_ = std::max(max_lag_ns_, f.replication_lag_ns);
      if (f.kind == scenario::fault_kind::redis_restart && f.persist == scenario::persistence::aof_everysec)
        keep_aof_ = true;
    }

    for (std::int64_t i = 0; i < sc.fleet.workers; ++i) {
      auto w = std::make_unique<worker_state>();
      w->index = static_cast<std::size_t>(i);
      w->node = "worker:" + std::to_string(i);
      w->clock = sc.fleet.clock_of(i);
      w->jitter = sim::substream(seed, "jitter/" + std::to_string(i));
      w->transport = std::make_unique<redis_transport>(redis_transport{this, w->index});
      worker_state* raw = w.get();
      w->client = std::make_unique<client_t>(
          sched_.get_executor(), *w->transport, cfg_, [this, raw] { return wall_ms(*raw); },
          [raw](std::int64_t ceiling) {
            return ceiling <= 0 ? 0 : static_cast<std::int64_t>(raw->jitter.uniform_u64(static_cast<std::uint64_t>(ceiling) + 1));
          });
      workers_.push_back(std::move(w));
    }
    idle_ = idle_set(workers_.size());
  }

  ~lease_world() {
    tearing_down_ = true;
    drop_idle_waits();
    sched_.shutdown();
  }

  run_record run() {
    schedule_next_arrival();
    if (src_.total() == 0) arrivals_done_ = true;
    for (const auto& f : sc_.faults.schedule) {
      const scenario::fault_spec* fp = &f;
      sched_.schedule_at(f.at_ns, [this, fp] { apply_fault(*fp); });
    }
    for (auto& w : workers_) spawn_worker(*w);
    // checks.liveness_horizon stops the run there first: once every event due by then has run, the
    // system must be idle (when nothing is left to run, finish() judges the same end state). The
    // check adds no event and does not move the clock.
    const std::optional<vtime_ns> lh = sc_.checks.liveness_horizon_ns;
    rec_.status = guard_.run(sched_, lh.value_or(sc_.checks.horizon_ns));
    if (lh && rec_.status == sim::run_status::time_limit && !guard_.wall_hit()) {
      // Events remain after it, so moving the clock to it changes no later time.
      if (sched_.now_ns() < *lh) sched_.run_until(*lh, 0);
      check_idle(*lh);
      if (stopped_) rec_.status = sim::run_status::stopped;
      else rec_.status = guard_.run(sched_, sc_.checks.horizon_ns);
    }
    finish();
    tearing_down_ = true;
    drop_idle_waits();
    sched_.shutdown();
    return std::move(rec_);
  }

  // --- the Redis node -------------------------------------------------------

  // One script call in flight: the client's handler, the request, the reply
  // on its way back. Shared by the delivery, the reply and the timeout
  // (call_ref); a world runs on one thread, so the count needs no atomics.
  template <class Handler>
  struct call_state {
    std::optional<Handler> h;
    bool done = false;
    sim::timer_handle timeout;
    std::uint32_t refs = 0;
    call_req req;
    redis::script_reply reply;
  };
  template <class Handler>
  class call_ref {
   public:
    explicit call_ref(call_state<Handler>* s) noexcept : p_(s) { ++p_->refs; }
    call_ref(const call_ref& o) noexcept : p_(o.p_) { ++p_->refs; }
    call_ref(call_ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    call_ref& operator=(const call_ref&) = delete;
    call_ref& operator=(call_ref&&) = delete;
    ~call_ref() {
      if (p_ && --p_->refs == 0) delete p_;
    }
    call_state<Handler>* operator->() const noexcept { return p_; }

   private:
    call_state<Handler>* p_;
  };

  template <class Handler>
  void start_call(std::size_t wi, redis::script_op op, const gate::script_request& request, Handler handler) {
    call_ref<Handler> st(new call_state<Handler>);
    st->h.emplace(std::move(handler));
    st->req = call_req{request.var,   cfg_.key,         request.token, request.now_ms, request.lease_ms,
                       request.limit, request.queue_timeout_ms};
    ++rec_.lease->redis_calls;
    st->timeout = sched_.schedule_after(redis_call_timeout_ns,
                                        [this, st] { complete_call(st, asio::error::timed_out, redis::script_reply{}); });
    if (!link_up(wi)) return;  // the request is lost; the client waits for its socket timeout
    sched_.schedule_after(redis_latency_ns, [this, wi, op, st] { deliver_to_redis(wi, op, st); });
  }

 private:
  template <class Handler>
  void complete_call(const call_ref<Handler>& st, error_code ec, const redis::script_reply& reply) {
    if (st->done) return;
    st->done = true;
    sched_.cancel(st->timeout);
    if (ec) ++rec_.lease->redis_errors;
    Handler h(std::move(*st->h));
    st->h.reset();
    auto ex = asio::get_associated_executor(h, sched_.get_executor());
    asio::dispatch(ex, [h = std::move(h), ec, reply]() mutable { std::move(h)(ec, reply); });
  }

  template <class Handler>
  void deliver_to_redis(std::size_t wi, redis::script_op op, const call_ref<Handler>& st) {
    if (!link_up(wi)) return;
    if (sched_.now_ns() < redis_paused_until_) {
      // A paused server runs the script late: its effect lands even if the client gave up.
      const vtime_ns resume = redis_paused_until_;
      sched_.schedule_at(resume, [this, wi, op, st] { deliver_to_redis(wi, op, st); });
      return;
    }
    const redis::script_reply reply = execute(wi, op, st->req);
    if (op == redis::script_op::acquire && gate_.world_mut == scenario::world_mutation::check_then_add &&
        reply.granted()) {
      // Broken on purpose: the count came back below the limit; the add is a
      // second round trip, and others may add in between.
      sched_.schedule_after(2 * redis_latency_ns, [this, wi, st] {
        if (!link_up(wi)) return;
        const call_req& req = st->req;
        const std::int64_t now_us = server_now_us();
        const std::int64_t now_ms = var_ == redis::variant::seed ? req.now_ms : now_us / 1000;
        primary_.zadd(req.key, static_cast<double>(now_ms), req.token, now_us);
        primary_.pexpire(req.key, req.lease_ms, now_us);
        const std::int64_t members = primary_.zcard(req.key, now_us);
        set_members_ = members;
        rec_.metrics.gate_inflight_max = std::max(rec_.metrics.gate_inflight_max, members);
        sample_series();
        check(l_gate_inflight, members <= cfg_.limit, [&] {
          return "the gate key holds " + std::to_string(members) + " live members, above the limit " +
                 std::to_string(cfg_.limit) + " (a non-atomic check-then-add)";
        });
        st->reply = redis::script_reply{};
        st->reply.value = 1;
        sched_.schedule_after(redis_latency_ns, [this, wi, st] {
          if (link_up(wi)) complete_call(st, {}, st->reply);
        });
      });
      return;
    }
    st->reply = reply;
    sched_.schedule_after(redis_latency_ns, [this, wi, st] {
      if (link_up(wi))
        complete_call(st, {}, st->reply);
      else
        hit(lp_lost_reply);
    });
  }

  std::int64_t server_now_us() const {
    return (lease_world_epoch_ms * 1'000'000 + sched_.now_ns() + redis_offset_ns_) / 1'000;
  }

  std::int64_t wall_ms(const worker_state& w) const {
    const vtime_ns t = sched_.now_ns();
    // t * drift_ppm / 1e6 without overflow: split t into whole and partial millions.
    const std::int64_t drift = (t / 1'000'000) * w.clock.drift_ppm + (t % 1'000'000) * w.clock.drift_ppm / 1'000'000;
    return (lease_world_epoch_ms * 1'000'000 + t + w.clock.offset_ns + drift + w.step_ns) / 1'000'000;
  }

  redis::script_reply run_script(redis::replica& r, redis::script_op op, const call_req& req,
                                 std::int64_t now_us) {
    switch (op) {
      case redis::script_op::acquire: {
        redis::acquire_args a;
        a.key = req.key;
        a.token = req.token;
        a.now_ms = req.now_ms;
        a.lease_ms = req.lease_ms;
        a.limit = req.limit;
        a.queue_timeout_ms = req.queue_timeout_ms;
        return redis::run_acquire(r, req.var, a, now_us);
      }
      case redis::script_op::release: {
        redis::release_args a;
        a.key = req.key;
        a.token = req.token;
        return redis::run_release(r, req.var, a, now_us);
      }
      case redis::script_op::renew: {
        redis::renew_args a;
        a.key = req.key;
        a.token = req.token;
        a.lease_ms = req.lease_ms;
        return redis::run_renew(r, req.var, a, now_us);
      }
    }
    return {};
  }

  redis::script_reply execute(std::size_t wi, redis::script_op op, const call_req& req) {
    const std::int64_t now_us = server_now_us();
    // AOF every second: the copy a restart would recover is the state at the
    // last whole second of activity.
    const vtime_ns second = sched_.now_ns() / sim::sec;
    if (keep_aof_ && second != aof_second_) {
      aof_copy_ = primary_;
      aof_second_ = second;
    }
    if (max_lag_ns_ > 0) {
      log_.push_back(logged_op{sched_.now_ns(), now_us, op, req});
      while (!log_.empty() && log_.front().at_ns <= sched_.now_ns() - max_lag_ns_) {
        (void)run_script(follower_, log_.front().op, log_.front().req, log_.front().server_now_us);
        log_.pop_front();
      }
    }
    bool was_member = false;
    if (op == redis::script_op::acquire) {
      const redis::sorted_set* set = primary_.zset_view(req.key, now_us);
      was_member = set && set->score(req.token).has_value();
      // Which live holders would this acquire reap?
      const std::int64_t now_ms = var_ == redis::variant::seed ? req.now_ms : now_us / 1000;
      const double cutoff = static_cast<double>(now_ms - req.lease_ms);
      const auto [first, last] =
          set ? set->score_range(redis::score_bound{-1e300, false}, redis::score_bound{cutoff, false})
              : std::pair<std::size_t, std::size_t>{0, 0};
      for (std::size_t i = first; i < last; ++i) {
        const redis::sorted_set::entry& e = set->entries()[i];
        if (const worker_state* holder = holder_of(e.member)) {
          ++rec_.lease->leases_reaped_live;
          hit(lp_reaped_live);
          push_trace("redis", "reaped live lease ", e.member, " (worker ", static_cast<std::int64_t>(holder->index), ")",
                     0, static_cast<std::uint64_t>(holder->index));
        }
      }
    }
    const redis::script_reply reply = op == redis::script_op::acquire && gate_.world_mut != scenario::world_mutation::none
                                          ? mutated_acquire(req, now_us)
                                          : run_script(primary_, op, req, now_us);
    const redis::sorted_set* after = primary_.zset_view(req.key, now_us);
    const std::int64_t members = after ? static_cast<std::int64_t>(after->size()) : 0;
    if (op == redis::script_op::acquire) {
      // Every permit older than the lease (by the server's clock) must be gone after an acquire.
      const double stale = static_cast<double>(now_us / 1000 - req.lease_ms);
      // Not a structured binding: clang 14 cannot capture one in the lambda below.
      const std::pair<std::size_t, std::size_t> range =
          after ? after->score_range(redis::score_bound{-1e300, false}, redis::score_bound{stale, true})
                : std::pair<std::size_t, std::size_t>{0, 0};
      const std::size_t first = range.first;
      check(l_expiry, first == range.second, [&] {
        return "permit " + after->entries()[first].member + " outlived its lease and was not reaped by an acquire";
      });
    }
    rec_.lease->set_members_max = std::max(rec_.lease->set_members_max, members);
    rec_.metrics.gate_inflight_max = std::max(rec_.metrics.gate_inflight_max, members);
    set_members_ = members;
    sample_series();
    push_trace("redis",
               op == redis::script_op::acquire   ? "acquire "
               : op == redis::script_op::release ? "release "
                                                 : "renew ",
               req.token, " -> ", reply.value, nullptr, members, wi);
    check(l_gate_inflight, members <= cfg_.limit, [&] {
      return "the gate key holds " + std::to_string(members) + " live members, above the limit " +
             std::to_string(cfg_.limit);
    });
    if (op == redis::script_op::acquire && reply.ok() && !reply.granted()) hit(lp_refused_at_limit);
    if (op == redis::script_op::acquire && reply.granted())
      check(l_token_once, !was_member, [&] {
        return "token " + req.token + " was granted while it already held a permit (a retried acquire "
               "whose first reply was lost)";
      });
    return reply;
  }

  // The broken acquires of the mutants (docs/mutants.md).
  redis::script_reply mutated_acquire(const call_req& req, std::int64_t now_us) {
    const std::int64_t now_ms = var_ == redis::variant::seed ? req.now_ms : now_us / 1000;
    redis::script_reply r;
    switch (gate_.world_mut) {
      case scenario::world_mutation::no_reaping:
        // The limit check and the add, atomically, but expired permits stay forever.
        if (primary_.zcard(req.key, now_us) < req.limit) {
          primary_.zadd(req.key, static_cast<double>(now_ms), req.token, now_us);
          primary_.pexpire(req.key, req.lease_ms, now_us);
          r.value = 1;
        }
        return r;
      case scenario::world_mutation::check_then_add: {
        // Stage one of two: the count. The add is a second round trip (see start_call).
        primary_.zremrangebyscore(req.key, redis::score_bound{0, false},
                                  redis::score_bound{static_cast<double>(now_ms - req.lease_ms), false}, now_us);
        r.value = primary_.zcard(req.key, now_us) < req.limit ? 1 : 0;
        return r;
      }
      default:
        return run_script(primary_, redis::script_op::acquire, req, now_us);
    }
  }

  bool cut_between(const std::string& a, const std::string& b) const {
    const vtime_ns now = sched_.now_ns();
    for (const auto& c : cuts_) {
      if (now >= c.until_ns) continue;
      if (c.b.empty() && (c.a == a || c.a == b)) return true;
      if ((c.a == a && c.b == b) || (c.a == b && c.b == a)) return true;
    }
    return false;
  }
  bool link_up(std::size_t wi) const {
    if (sched_.now_ns() < redis_down_until_) return false;
    if (cuts_.empty()) return true;
    return !cut_between(workers_[wi]->node, "redis");
  }

  // --- workers --------------------------------------------------------------

  // An idle worker waits for work as it would on a timer that never expires
  // and is cancelled to wake it: the wait takes one sequence number when it
  // starts and the wake-up is posted (one event), so the run's order and
  // event count are those of such a timer. The wait's own timer entry is
  // cancelled at once, so it leaves the heap at its next pop instead of
  // staying in it, never due, after the wake-up.
  template <class Token>
  auto async_idle_wait(worker_state& w, Token&& token) {
    return asio::async_initiate<Token, void(error_code)>(
        [this, &w](auto handler) {
          sched_.cancel(sched_.schedule_at(sched_.now_ns(), [] {}));
          w.resume = [this, h = std::move(handler)]() mutable {
            auto ex = asio::get_associated_executor(h, sched_.get_executor());
            asio::dispatch(ex, [h = std::move(h)]() mutable { std::move(h)(error_code(asio::error::operation_aborted)); });
          };
        },
        token);
  }
  void spawn_worker(worker_state& w) {
    w.kill = std::make_unique<asio::cancellation_signal>();
    w.started = false;
    const std::uint64_t gen = w.generation;
    asio::co_spawn(sched_.get_executor(), worker_loop(w.index, gen),
                   asio::bind_cancellation_slot(w.kill->slot(), [this](std::exception_ptr e) {
                     if (!e || tearing_down_) return;
                     try {
                       std::rethrow_exception(e);
                     } catch (const worker_crashed&) {
                     } catch (const boost::system::system_error& se) {
                       if (se.code() != asio::error::operation_aborted) throw;
                     }
                   }));
  }

  // What checkpoint() would let through at once, tested without entering it.
  // (A crash bumps the generation, so a cancelled loop always enters it.)
  bool clear_to_run(std::size_t wi, std::uint64_t gen) const {
    const worker_state& w = *workers_[wi];
    return w.generation == gen && w.alive && sched_.now_ns() >= w.paused_until;
  }

  sim::awaitable<void> checkpoint(std::size_t wi, std::uint64_t gen) {
    worker_state& w = *workers_[wi];
    for (;;) {
      if (w.generation != gen || !w.alive) throw worker_crashed{};
      if (sched_.now_ns() >= w.paused_until) co_return;
      co_await sim::sleep_for(w.paused_until - sched_.now_ns());
    }
  }

  sim::awaitable<void> worker_loop(std::size_t wi, std::uint64_t gen) {
    worker_state& w = *workers_[wi];
    w.started = true;
    for (;;) {
      if (!clear_to_run(wi, gen)) co_await checkpoint(wi, gen);
      if (queue_.empty()) {
        if (arrivals_done_) co_return;
        set_idle(w, true);
        (void)co_await async_idle_wait(w, asio::as_tuple(sim::use_awaitable));
        set_idle(w, false);
        continue;
      }
      work_item item = queue_.front();
      queue_.pop_front();
      sample_series();
      w.current = item;
      co_await process(wi, gen, item);
      w.current.reset();
    }
  }

  // "w<worker>-<item>", written in place.
  static std::string token_of(std::size_t wi, std::uint64_t number) {
    char digits[24];
    std::string t(1, 'w');
    t.append(digits, std::to_chars(digits, digits + sizeof digits, wi).ptr);
    t.push_back('-');
    t.append(digits, std::to_chars(digits, digits + sizeof digits, number).ptr);
    return t;
  }

  sim::awaitable<void> process(std::size_t wi, std::uint64_t gen, work_item item) {
    worker_state& w = *workers_[wi];
    const std::string token = token_of(wi, item.number);
    push_trace("worker", "acquire ", token, holders_, wi);
    gate::acquire_outcome got = co_await w.client->acquire(token);
    if (!clear_to_run(wi, gen)) co_await checkpoint(wi, gen);
    if (got.ec == gate::gate_errc::unreachable && gate_.world_mut == scenario::world_mutation::fail_open) {
      // Broken on purpose: no confirmed permit, and the request goes out anyway.
      push_trace("worker", "fail-open ", token, holders_, wi);
      const int st = co_await portal_call(wi, item);
      if (!clear_to_run(wi, gen)) co_await checkpoint(wi, gen);
      end_item(item, st == 200 ? "completed" : st == 429 ? "rate_limited" : "client_timeout");
      co_return;
    }
    if (got.ec) {
      hit(got.ec == gate::gate_errc::unreachable ? lp_deferred_unreachable : lp_deferred);
      ++rec_.lease->deferred;
      push_trace("worker", "deferred " + token + " (" + got.ec.message() + ")", holders_, wi);
      end_item(item, got.ec == gate::gate_errc::unreachable ? "deferred_unreachable" : "deferred");
      co_return;
    }
    rec_.metrics.wait_ns.add(sched_.now_ns() - item.arrived_ns);
    if (got.attempts > 1) hit(lp_granted_after_backoff);
    if (lane* l = lane_of(item.number)) {
      l->granted_ns = sched_.now_ns();
      l->worker = static_cast<std::int64_t>(wi);
    }
    w.holding = token;
    ++holders_;
    rec_.lease->holders_max = std::max(rec_.lease->holders_max, holders_);
    push_trace("worker", "holds ", token, holders_, wi);
    std::shared_ptr<bool> renewing;
    if (var_ == redis::variant::renewal) {
      renewing = std::make_shared<bool>(true);
      // The renewer stops by itself at its next tick once the work is over or
      // the worker crashed (a signal has one slot, owned by the worker loop).
      asio::co_spawn(sched_.get_executor(), renew_loop(wi, gen, token, renewing), [](std::exception_ptr) {});
    }
    const vtime_ns started = sched_.now_ns();
    const int status = co_await portal_call(wi, item);
    if (!clear_to_run(wi, gen)) co_await checkpoint(wi, gen);
    rec_.metrics.service_ns.add(sched_.now_ns() - started);
    if (renewing) *renewing = false;
    // The "finally": release whatever happened at the portal.
    const error_code rel = co_await w.client->release(token);
    if (!clear_to_run(wi, gen)) co_await checkpoint(wi, gen);
    if (rel) {
      ++rec_.lease->failed_releases;
      hit(lp_failed_release);
    }
    drop_holding(w);
    end_item(item, status == 200 ? "completed" : status == 429 ? "rate_limited" : "client_timeout");
  }

  sim::awaitable<void> renew_loop(std::size_t wi, std::uint64_t gen, std::string token, std::shared_ptr<bool> on) {
    worker_state& w = *workers_[wi];
    const vtime_ns every = gate_.lease.renew_every_ns;
    for (;;) {
      co_await sim::sleep_for(every);
      if (!*on || w.generation != gen) co_return;
      if (sched_.now_ns() < w.paused_until) continue;  // a paused process renews nothing
      const bool kept = co_await w.client->renew(token);
      if (!*on || w.generation != gen) co_return;
      if (!kept) {
        ++rec_.lease->renewals_lost;
        hit(lp_renewal_lost);
        push_trace("worker", "renewal lost ", token, holders_, wi);
        co_return;
      }
    }
  }

  // The portal: a connection above the true cap is refused with 429; the
  // others run for their service time whatever the client does.
  sim::awaitable<int> portal_call(std::size_t wi, const work_item& item) {
    const std::int64_t attempt = portal_open_ + 1;
    rec_.metrics.portal_inflight_max = std::max(rec_.metrics.portal_inflight_max, attempt);
    check(l_portal_inflight, attempt <= portal_cap_, [&] {
      return "worker " + std::to_string(wi) + " opened connection " + std::to_string(attempt) +
             " at the portal, above its true cap " + std::to_string(portal_cap_);
    });
    if (attempt > portal_cap_) {
      ++rec_.lease->portal_429;
      hit(lp_portal_429);
      push_trace("portal", "429 for item ", {}, nullptr, static_cast<std::int64_t>(item.number), nullptr, portal_open_, wi);
      co_return 429;
    }
    ++portal_open_;
    sample_series();
    push_trace("portal", "open item ", {}, nullptr, static_cast<std::int64_t>(item.number), nullptr, portal_open_, wi);
    if (lane* l = lane_of(item.number)) l->work_start_ns = sched_.now_ns();
    sched_.schedule_after(item.service_ns, [this, n = item.number, wi] {
      --portal_open_;
      sample_series();
      push_trace("portal", "close item ", {}, nullptr, static_cast<std::int64_t>(n), nullptr, portal_open_, wi);
      if (lane* l = lane_of(n)) l->work_end_ns = sched_.now_ns();
    });
    // sim::sleep_for's body, without a coroutine frame of its own.
    sim::sim_timer wait(sched_);
    if (item.service_ns <= item.read_timeout_ns) {
      wait.expires_after(item.service_ns);
      co_await wait.async_wait(sim::use_awaitable);
      co_return 200;
    }
    wait.expires_after(item.read_timeout_ns);
    co_await wait.async_wait(sim::use_awaitable);
    ++rec_.metrics.client_timeouts;
    hit(lp_client_read_timeout);
    push_trace("worker", "ReadTimeout item ", {}, nullptr, static_cast<std::int64_t>(item.number), nullptr, portal_open_, wi);
    if (lane* l = lane_of(item.number)) l->gave_up_ns = sched_.now_ns();
    co_return 0;
  }

  lane* lane_of(std::uint64_t number) { return timeline_ ? rec_.series.lane_for(number) : nullptr; }

  void hit(lease_probe p) {
    if (!tearing_down_) ++rec_.probes[p].second;
  }

  // The worker that believes it holds the permit `token` (tokens are unique per acquisition).
  const worker_state* holder_of(std::string_view token) const {
    for (const auto& w : workers_)
      if (w->holding && *w->holding == token) return w.get();
    return nullptr;
  }

  void drop_holding(worker_state& w) {
    if (!w.holding) return;
    w.holding.reset();
    --holders_;
  }

  void end_item(const work_item& item, const char* how) {
    ++ended_;
    if (lane* l = lane_of(item.number)) {
      l->ended_ns = sched_.now_ns();
      l->outcome = how;
    }
    if (std::string(how) == "completed")
      ++rec_.metrics.completed;
    else
      ++rec_.metrics.refused[how];
  }

  // Live set members, open portal connections and queued items, into the timeline.
  // A sample that repeats the last one inside the same bucket changes nothing
  // in the timeline, and is left out.
  void sample_series() {
    if (!timeline_) return;
    const vtime_ns t = sched_.now_ns();
    const auto waiting = static_cast<std::int64_t>(queue_.size());
    if (t < sampled_bucket_end_ && set_members_ == sampled_gate_ && portal_open_ == sampled_portal_ &&
        waiting == sampled_waiting_)
      return;
    rec_.series.sample(t, set_members_, portal_open_, waiting);
    const vtime_ns width = rec_.series.bucket_width_ns();  // the bucket widths change only in sample()
    sampled_bucket_end_ = (t / width + 1) * width;
    sampled_gate_ = set_members_;
    sampled_portal_ = portal_open_;
    sampled_waiting_ = waiting;
  }

  // --- arrivals -------------------------------------------------------------

  void schedule_next_arrival() {
    std::optional<arrival> next = src_.next();
    if (!next) {
      arrival_pending_ = false;
      return;
    }
    arrival_pending_ = true;
    const vtime_ns at = next->at_ns;
    sched_.schedule_at(at, [this, a = std::move(*next)] {
      schedule_next_arrival();  // one arrival ahead; clears arrival_pending_ after the last
      work_item it;
      it.number = ++items_;
      it.arrived_ns = sched_.now_ns();
      it.service_ns = a.service_ns ? *a.service_ns : sc_.service.service_time.sample(service_rng_);
      it.read_timeout_ns = a.client_timeout_ns.value_or(read_timeout_default_);
      if (sched_.now_ns() < burst_until_) it.read_timeout_ns = std::min(it.read_timeout_ns, burst_timeout_ns_);
      ++rec_.metrics.requests;
      queue_.push_back(it);
      sample_series();
      if (lane* l = lane_of(it.number)) l->arrived_ns = it.arrived_ns;
      if (!arrival_pending_) arrivals_done_ = true;
      wake_one();
      if (arrivals_done_) wake_all_idle();
    });
  }

  void wake(worker_state& w) {
    if (w.resume) sched_.post(std::move(w.resume));
    w.resume = {};
  }
  void drop_idle_waits() {
    for (auto& w : workers_) w->resume = {};
  }

  // Idle workers are also kept in idle_ by index, so that the next one to
  // wake is found without scanning the fleet; the order is the scan's: least
  // index first.
  void set_idle(worker_state& w, bool idle) {
    if (w.idle == idle) return;
    w.idle = idle;
    if (idle)
      idle_.insert(w.index);
    else
      idle_.erase(w.index);
  }
  void wake_one() {
    for (std::size_t i = idle_.next(); i != idle_set::npos; i = idle_.next(i + 1)) {
      worker_state& w = *workers_[i];
      if (!w.alive) continue;  // not expected (a crash clears idle), but the scan skipped such a worker
      set_idle(w, false);
      wake(w);
      return;
    }
  }
  void wake_all_idle() {
    for (std::size_t i = idle_.next(); i != idle_set::npos; i = idle_.next(i + 1)) {
      worker_state& w = *workers_[i];
      set_idle(w, false);
      wake(w);
    }
  }

  // --- faults ---------------------------------------------------------------

  std::string node_name(const scenario::node_ref& n) const { return scenario::to_string(n); }

  void apply_fault(const scenario::fault_spec& f) {
    using fk = scenario::fault_kind;
    const vtime_ns now = sched_.now_ns();
    const vtime_ns dur = f.duration_ns.value_or(0);
    push_trace("fault", std::string(scenario::fault_kind_names[static_cast<std::size_t>(f.kind)]) +
                            (f.target ? " " + node_name(*f.target) : std::string()),
               0, 0);
    if (timeline_) {
      fault_window fw;
      fw.kind = scenario::fault_kind_names[static_cast<std::size_t>(f.kind)];
      fw.target = f.target ? node_name(*f.target)
                  : f.between ? node_name(f.between->first) + "|" + node_name(f.between->second)
                              : std::string();
      fw.start_ns = now;
      fw.end_ns = now + (f.kind == fk::crash && !f.duration_ns ? 0 : dur);
      rec_.series.add_window(std::move(fw));
    }
    switch (f.kind) {
      case fk::crash: {
        if (!f.target || f.target->k != scenario::node_ref::kind::worker) break;
        worker_state& w = *workers_[static_cast<std::size_t>(f.target->worker)];
        if (!w.alive) break;
        w.alive = false;
        ++w.generation;
        if (w.current) {
          end_item(*w.current, "crashed");
          w.current.reset();
        }
        if (w.holding) hit(lp_crash_while_holding);
        drop_holding(w);  // its permit stays in Redis until the lease expires
        set_idle(w, false);
        // A loop that has not run yet stops at its first checkpoint; a
        // coroutine cancelled before it first runs would end in an exception
        // outside its body.
        if (w.started) w.kill->emit(asio::cancellation_type::terminal);
        wake(w);
        if (f.duration_ns) {
          worker_state* wp = &w;
          sched_.schedule_after(dur, [this, wp] {
            wp->alive = true;
            spawn_worker(*wp);
          });
        }
        break;
      }
      case fk::pause:
        if (f.target && f.target->k == scenario::node_ref::kind::worker)
          workers_[static_cast<std::size_t>(f.target->worker)]->paused_until = now + dur;
        else if (f.target && f.target->k == scenario::node_ref::kind::redis)
          redis_paused_until_ = now + dur;
        break;
      case fk::partition:
        if (f.between)
          cuts_.push_back(cut{node_name(f.between->first), node_name(f.between->second), now + dur});
        else if (f.target)
          cuts_.push_back(cut{node_name(*f.target), "", now + dur});
        break;
      case fk::clock_step:
        if (f.target && f.target->k == scenario::node_ref::kind::worker)
          workers_[static_cast<std::size_t>(f.target->worker)]->step_ns += f.step_ns;
        else if (f.target && f.target->k == scenario::node_ref::kind::redis)
          redis_offset_ns_ += f.step_ns;
        break;
      case fk::redis_restart:
        primary_ = f.persist == scenario::persistence::aof_everysec ? aof_copy_ : redis::replica{};
        follower_ = primary_;
        log_.clear();
        redis_down_until_ = now + dur;
        break;
      case fk::redis_failover:
        // The follower has applied every write older than the lag; newer ones are lost.
        while (!log_.empty() && log_.front().at_ns <= now - f.replication_lag_ns) {
          (void)run_script(follower_, log_.front().op, log_.front().req, log_.front().server_now_us);
          log_.pop_front();
        }
        log_.clear();
        primary_ = follower_;
        if (keep_aof_) aof_copy_ = primary_;
        redis_down_until_ = now + dur;
        break;
      case fk::client_timeout_burst:
        burst_until_ = now + dur;
        burst_timeout_ns_ = f.client_timeout_ns;
        break;
    }
  }

  // --- monitors -------------------------------------------------------------

  template <class Describe>
  void check(std::size_t which, bool ok, Describe&& describe) {
    if (tearing_down_) return;
    invariant_result& inv = rec_.invariants[which];
    if (!inv.enabled) return;
    ++inv.checked;
    if (ok || !inv.holds) return;
    inv.holds = false;
    inv.first = violation{sched_.now_ns(), describe(), trace_total_};
    if (!stopped_) {
      stopped_ = true;
      frozen_trace_ = true;
      sched_.stop();
    }
  }

  // The trace keeps its last trace_cap_ entries in a ring whose slots are
  // reused; an entry's text is `head word mid number tail`, put together only
  // for the entries that are kept (finish()).
  struct pending_trace {
    vtime_ns at_ns = 0;
    const char* source = "";
    const char* head = "";
    std::string word;
    const char* mid = nullptr;   // with a number: the text before it
    bool has_number = false;
    std::int64_t number = 0;
    const char* tail = nullptr;  // after the number
    std::int64_t count = 0;
    std::uint64_t ref = 0;

    std::string text() const {
      std::string t = head;
      t += word;
      if (mid) t += mid;
      if (has_number) t += std::to_string(number);
      if (tail) t += tail;
      return t;
    }
  };

  pending_trace* next_trace_slot() {
    if (tearing_down_) return nullptr;
    ++trace_total_;
    if (frozen_trace_ || trace_cap_ == 0) return nullptr;
    if (trace_.size() < trace_cap_) return &trace_.emplace_back();
    ++rec_.trace_dropped;  // the oldest entry falls out
    pending_trace* slot = &trace_[trace_head_];
    trace_head_ = (trace_head_ + 1) % trace_cap_;
    return slot;
  }

  void push_trace(const char* source, const char* head, std::string_view word, const char* mid, std::int64_t number,
                  const char* tail, std::int64_t count, std::uint64_t ref) {
    if (pending_trace* e = push_trace_parts(source, head, word, count, ref)) {
      e->mid = mid;
      e->has_number = true;
      e->number = number;
      e->tail = tail;
    }
  }
  void push_trace(const char* source, const char* head, std::string_view word, std::int64_t count, std::uint64_t ref) {
    push_trace_parts(source, head, word, count, ref);
  }
  // The next trace slot with the parts every entry has (nullptr: no trace kept).
  pending_trace* push_trace_parts(const char* source, const char* head, std::string_view word, std::int64_t count,
                                  std::uint64_t ref) {
    pending_trace* e = next_trace_slot();
    if (!e) return nullptr;
    e->at_ns = sched_.now_ns();
    e->source = source;
    e->head = head;
    e->word.assign(word);
    e->mid = nullptr;
    e->has_number = false;
    e->tail = nullptr;
    e->count = count;
    e->ref = ref;
    return e;
  }
  void push_trace(const char* source, std::string what, std::int64_t count, std::uint64_t ref) {
    push_trace(source, "", what, count, ref);
  }

  // At checks.liveness_horizon `lh_ns`: every item that arrived has ended and no worker holds a permit.
  void check_idle(vtime_ns lh_ns) {
    std::string why;
    if (ended_ != items_) why = std::to_string(items_ - ended_) + " work items that arrived had not ended";
    else if (holders_ != 0) why = std::to_string(holders_) + " workers still held a permit";
    check(l_liveness, why.empty(), [&] {
      return "at checks.liveness_horizon (" + scenario::format_duration(lh_ns) + ") " + why;
    });
  }

  void finish() {
    rec_.metrics.simulated_ns = sched_.now_ns();
    rec_.diagnostics = {.events = sched_.events_run(), .sequence_numbers = sched_.next_sequence()};
    // A run cut short is inconclusive: what it did not reach is not judged.
    const std::uint64_t total = src_.total();
    const std::uint64_t pending = total - ended_;
    if (!stopped_)
      rec_.inconclusive = guard_.reason(rec_.status, sched_.now_ns(), sc_.checks.horizon_ns, pending, total);
    if (!stopped_ && !rec_.inconclusive) {
      std::string why;
      if (ended_ != items_ || arrival_pending_)
        why = std::to_string(items_ - ended_) + " work items never ended";
      if (why.empty()) {
        // One lease after the end, every permit must be released or expired.
        const std::int64_t later_us = server_now_us() + (gate_.lease.lease_ns + sim::ms) / 1000;
        const std::int64_t left = primary_.zcard(cfg_.key, later_us);
        if (left != 0) why = std::to_string(left) + " permits still held one lease after the end";
      }
      check(l_liveness, why.empty(), [&] { return why; });
    }
    rec_.trace.clear();
    rec_.trace.reserve(trace_.size());
    for (std::size_t i = 0; i < trace_.size(); ++i) {
      const pending_trace& e = trace_[(trace_head_ + i) % trace_.size()];
      rec_.trace.push_back(trace_entry{e.at_ns, e.source, e.text(), e.count, 0, e.ref});
    }
  }

  friend struct redis_transport;

  const scenario::scenario& sc_;
  const scenario::gate_spec& gate_;
  redis::variant var_;
  bool timeline_ = true;  // lease_run_options::timeline
  gate::lease_client_config cfg_;
  sim::scheduler sched_;
  run_guard guard_;
  sim::prng service_rng_;
  run_record rec_;
  std::vector<std::unique_ptr<worker_state>> workers_;
  idle_set idle_;  // the indices of the idle workers (set_idle)
  arrival_source src_;
  bool arrivals_done_ = false;
  bool arrival_pending_ = false;
  std::deque<work_item> queue_;
  std::uint64_t items_ = 0;
  std::uint64_t ended_ = 0;
  std::int64_t holders_ = 0;
  std::int64_t set_members_ = 0;
  std::int64_t portal_open_ = 0;
  std::int64_t portal_cap_ = 1;
  vtime_ns sampled_bucket_end_ = 0;  // the end of the last sample's bucket (0: none yet)
  std::int64_t sampled_gate_ = 0, sampled_portal_ = 0, sampled_waiting_ = 0;
  vtime_ns read_timeout_default_ = 0;
  redis::replica primary_;
  redis::replica aof_copy_;  // read only by a restart with AOF persistence (keep_aof_)
  bool keep_aof_ = false;
  vtime_ns aof_second_ = -1;
  redis::replica follower_;
  std::deque<logged_op> log_;
  vtime_ns max_lag_ns_ = 0;
  vtime_ns redis_down_until_ = 0;
  vtime_ns redis_paused_until_ = 0;
  vtime_ns redis_offset_ns_ = 0;
  std::vector<cut> cuts_;
  vtime_ns burst_until_ = 0;
  vtime_ns burst_timeout_ns_ = 0;
  bool stopped_ = false;
  bool tearing_down_ = false;
  bool frozen_trace_ = false;
  std::size_t trace_cap_ = 64;
  std::uint64_t trace_total_ = 0;
  std::vector<pending_trace> trace_;  // a ring once full: trace_head_ is the oldest entry
  std::size_t trace_head_ = 0;
};

template <class Token>
auto redis_transport::async_script(redis::script_op op, const gate::script_request& req, Token&& token) {
  return asio::async_initiate<Token, void(error_code, redis::script_reply)>(
      // The request outlives the initiation: a use_awaitable call initiates inside the co_await
      // of the expression that holds it.
      [this, op, r = &req](auto handler) { world->start_call(worker, op, *r, std::move(handler)); }, token);
}

}  // namespace

run_record run_lease_scenario(const scenario::scenario& sc, std::uint64_t seed, scenario::lease_variant variant,
                              const lease_run_options& options) {
  lease_world w(sc, seed, variant, options);
  return w.run();
}

}  // namespace admit::world
