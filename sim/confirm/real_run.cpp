#include "sim/confirm/real_run.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>

#include "gate/admit_assert.hpp"
#include "gate/asio/lease_client.hpp"
#include "gate/asio/resp_transport.hpp"
#include "gate/asio/steady_env.hpp"
#include "sim/confirm/link_proxy.hpp"
#include "sim/confirm/redis_server.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/fault_kinds.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/cause_text.hpp"
#include "sim/world/lease_world.hpp"

namespace admit::confirm {

namespace {

namespace asio = boost::asio;
using env = gate::steady_env<>;
using client_t = gate::lease_client<env, gate::resp_transport>;
template <class T>
using awaitable = asio::awaitable<T, asio::any_io_executor>;
using steady = std::chrono::steady_clock;
using fk = scenario::fault_kind;


persistence persistence_of(scenario::persistence p) {
  switch (p) {
    case scenario::persistence::none: return persistence::none;
    case scenario::persistence::aof_everysec: return persistence::aof_everysec;
    case scenario::persistence::aof_always: return persistence::aof_always;
  }
  return persistence::none;
}

// An instant of the scenario as a sentence says it ("11.2s", "20.232s": sim/world/cause_text.hpp).
std::string at_text(std::int64_t ns) { return world::span_text(ns); }

// The monitor's one call: the server's clock and the holders key's entries, read at one instant (a script
// of admitsim's own; it writes nothing). KEYS[1] the holders key. Answers {seconds, microseconds, type,
// entries}: entries flat, member then score (a sorted set's, WITHSCORES) or field then value (a hash's).
constexpr const char* monitor_script = R"lua(
local t = redis.call('TIME')
local kind = redis.call('TYPE', KEYS[1])['ok']
local entries = {}
if kind == 'zset' then
  entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
elseif kind == 'hash' then
  entries = redis.call('HGETALL', KEYS[1])
end
return {t[1], t[2], kind, entries}
)lua";

// What the monitor read: the server's clock, and each holder's score as the simulator reads it
// (sim/world/lease/redis_node.cpp): a sorted set's score; a hash field's value when it is a finite number,
// else +inf (never expires).
struct holders_read {
  std::int64_t server_now_ms = 0;
  std::vector<double> scores;
  // Members live at server time `at_ms`, scores meaning the time of acquiring (`offset_ms` the lease) or
  // the expiry (`offset_ms` 0).
  std::int64_t live_at(std::int64_t at_ms, std::int64_t offset_ms) const {
    const double stale = static_cast<double>(at_ms - offset_ms);
    return std::count_if(scores.begin(), scores.end(), [stale](double s) { return s > stale; });
  }
};

std::optional<std::int64_t> integer_of(const redis::reply& r) {
  if (r.type != redis::reply::kind::bulk) return std::nullopt;
  std::int64_t v = 0;
  const char* first = r.text.data();
  const char* last = first + r.text.size();
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc{} || end != last) return std::nullopt;
  return v;
}

// The monitor's answer read; nullopt for an answer of another shape (an error; the key of a type the
// protocol does not say), which is not a reading.
std::optional<holders_read> read_holders(const redis::reply& answer, bool hash) {
  if (answer.type != redis::reply::kind::array || answer.elements.size() != 4) return std::nullopt;
  const std::optional<std::int64_t> sec = integer_of(answer.elements[0]);
  const std::optional<std::int64_t> usec = integer_of(answer.elements[1]);
  const redis::reply& kind = answer.elements[2];
  const redis::reply& entries = answer.elements[3];
  if (!sec || !usec || kind.type != redis::reply::kind::bulk || entries.type != redis::reply::kind::array)
    return std::nullopt;
  if (kind.text != "none" && kind.text != (hash ? "hash" : "zset")) return std::nullopt;
  if (entries.elements.size() % 2 != 0) return std::nullopt;
  holders_read out;
  out.server_now_ms = *sec * 1000 + *usec / 1000;
  out.scores.reserve(entries.elements.size() / 2);
  for (std::size_t i = 1; i < entries.elements.size(); i += 2) {
    const std::string& t = entries.elements[i].text;
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    const bool number = ec == std::errc{} && end == t.data() + t.size();
    if (hash) out.scores.push_back(number && std::isfinite(v) ? v : std::numeric_limits<double>::infinity());
    else if (number) out.scores.push_back(v);
    else return std::nullopt;  // a sorted set's scores are numbers ("inf" and "-inf" included)
  }
  return out;
}

// A coroutine of the run: its cancellation, and whether it has ended.
struct task {
  asio::cancellation_signal signal;
  bool ended = false;
};

struct item {
  std::uint64_t number = 0;
  std::int64_t at_ns = 0;
  std::int64_t service_ns = 0;
  std::int64_t client_timeout_ns = 0;  // its read timeout at the portal (scenario time)
};

struct worker {
  std::size_t index = 0;
  std::uint64_t generation = 0;
  bool alive = true;
  steady::time_point paused_until{};
  std::int64_t offset_real_ns = 0;  // the clock's offset and steps so far, in real ns
  std::int64_t drift_ppm = 0;
  sim::prng jitter{0};
  // Each generation's connection and client; a crashed generation's stay (a call may still be on the wire).
  std::vector<std::unique_ptr<gate::resp_transport>> transports;
  std::vector<std::unique_ptr<client_t>> clients;
  task* live = nullptr;  // the current generation's loop, cancelled by its crash
  bool retired = false;  // a lost renewal under stop_new_work: it takes no new item until it is restarted
  bool aborted = false;  // a lost renewal under abort_request ended its wait for the work
  bool exited = false;   // requeue_and_exit: its acquire gave up, its item went back, its loop ended
  std::unique_ptr<asio::steady_timer> portal_wait;  // its wait for the work (abort_request cancels it)
  std::shared_ptr<bool> slot;  // its request's slot at the portal, while open (service.on_client_close)
  std::unique_ptr<asio::steady_timer> idle;   // its wait for an item (notify() ends it)
};

class real_fleet {
 public:
  real_fleet(const scenario::scenario& sc, const gate::lease_client_config& cfg, const run_options& opts)
      : sc_(sc), cfg_(cfg), opts_(opts){}

  run_result run();
  // The loop had to be stopped with coroutines still suspended in it: the fleet cannot be destroyed safely.
  bool stranded() const noexcept { return stranded_; }
  void stop_server() noexcept { server_.reset(); }

 private:
  // An item's read timeout, as the simulated portal gives it (portal::read_timeout_for): its own, else the
  // service's, else the portal's default; shortened to a client-timeout burst's while the last burst applied
  // by its arrival lasts (a burst at the arrival's own instant included).
  std::int64_t read_timeout_at(std::int64_t at_ns, std::optional<std::int64_t> asked) const {
    const std::int64_t t = asked.value_or(sc_.service.client_timeout_ns.value_or(world::default_portal_read_timeout_ns));
    const scenario::fault_spec* last = nullptr;
    for (const scenario::fault_spec& f : sc_.faults.schedule)
      if (f.kind == fk::client_timeout_burst && f.at_ns <= at_ns && (last == nullptr || f.at_ns >= last->at_ns)) last = &f;
    if (last == nullptr || at_ns >= last->at_ns + last->duration_ns.value_or(0)) return t;
    return std::min(t, last->client_timeout_ns);
  }
  std::int64_t real_ns(std::int64_t scenario_ns) const {
    return static_cast<std::int64_t>(std::llround(static_cast<double>(scenario_ns) * opts_.time_scale));
  }
  steady::time_point real_at(std::int64_t scenario_ns) const { return t0_ + std::chrono::nanoseconds(real_ns(scenario_ns)); }
  std::int64_t scenario_now() const {
    const auto real = std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - t0_).count();
    return static_cast<std::int64_t>(std::llround(static_cast<double>(real) / opts_.time_scale));
  }
  static asio::ip::tcp::endpoint loopback(std::uint16_t port) { return {asio::ip::make_address("127.0.0.1"), port}; }
  asio::ip::tcp::endpoint endpoint() const { return loopback(server_->port()); }
  std::chrono::nanoseconds call_timeout() const {
    return std::chrono::nanoseconds(std::max<std::int64_t>(1'000'000, real_ns(world::redis_call_timeout_ns)));
  }
  std::int64_t wall_ms(const worker& w) const {
    const auto sys = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - t0_).count();
    const std::int64_t drift = static_cast<std::int64_t>(static_cast<double>(elapsed) * static_cast<double>(w.drift_ppm) / 1e6);
    return (sys + w.offset_real_ns + drift) / 1'000'000;
  }
  client_t& new_generation(worker& w);
  // The server of fault `timing` serves again (a restart's or failover's end), meant at scenario time `intended_ns`.
  void came_back(std::size_t timing, std::int64_t intended_ns) {
    fault_timing& t = result_.faults.at(timing);
    t.back_intended_ns = intended_ns;
    t.back_achieved_ns = scenario_now();
    t.back_late_real_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - real_at(intended_ns)).count();
  }
  awaitable<void> sleep_until(steady::time_point t);
  // Waits out the worker's pause; false once its generation is over (a crash, the run's end).
  awaitable<bool> checkpoint(worker& w, std::uint64_t gen);
  awaitable<void> wait_out_pause(worker& w) {
    while (!done_ && steady::now() < w.paused_until) co_await sleep_until(w.paused_until);
  }
  awaitable<void> feed();
  awaitable<void> work(worker& w, std::uint64_t gen);
  awaitable<void> portal_work(std::size_t wi, item it, std::shared_ptr<bool> slot);
  // The client of worker `w` closed its connection to the portal (its read timeout, its crash, a request
  // it gave up): under service.on_client_close free_slot the portal stops the work and frees its slot at
  // once; under keep_work the work goes on to its end.
  void client_closed(worker& w) {
    if (sc_.service.on_client_close != scenario::service_spec::client_close_policy::free_slot || !w.slot) return;
    if (*w.slot) {
      *w.slot = false;
      --in_portal_;
      ADMIT_ASSERT(in_portal_ >= 0, "a slot freed once");
      maybe_finish();
    }
    w.slot.reset();
  }
  // The monitor's call (monitor_script on the protocol's holders key) and how to read its answer.
  struct holders_watch {
    gate::command_request req;
    bool hash = false;           // the holders are a hash (else a sorted set)
    std::int64_t offset_ms = 0;  // a score's expiry is the score plus this: the lease (scores are times of
                                 // acquiring) or 0 (scores are expiries)
    std::string counted;         // how a sentence names the count: "ZCARD <key>", "HLEN <key>"
  };
  holders_watch watch_of() const;
  // One read of the holders on the monitor's connection; nullopt while the server is down, paused or being
  // switched, or for an answer that is not a reading.
  awaitable<std::optional<holders_read>> read_now(const holders_watch& w);
  awaitable<void> monitor();
  awaitable<void> fault(const scenario::fault_spec& f);
  // The worker's process dies at once (its calls and waits end, it never releases); with `restart_after` it
  // comes back as a new process after it.
  awaitable<void> crash_worker(worker& w, std::optional<std::int64_t> restart_after_ns);
  // A holder's renewals (the client's keep_renewed), and what its protocol does when one is lost
  // (client.on_renewal_lost), as the simulated world does (lease_world.cpp, renew_loop).
  awaitable<void> renewer(worker& w, std::uint64_t gen, client_t& c, std::string token, std::shared_ptr<bool> holding);
  awaitable<void> setup();
  // Waits until the replica has synced with the primary (before the run's start, and after a failover).
  awaitable<void> replica_synced();
  // A replica of the primary behind a link as late as `lag_ns` (scenario time), not yet synced; why it could
  // not start, or nullopt. With `wait` false its process is only launched (the loop must not block while a
  // server starts): replica_up_and_synced() then waits for it.
  std::optional<std::string> start_replica(std::int64_t lag_ns, bool wait);
  awaitable<void> replica_up_and_synced();
  // The failover after `f` in time (its replica is started once `f` is made), or nullptr.
  const scenario::fault_spec* next_failover(const scenario::fault_spec& f) const;
  // The largest replication lag of the schedule's failovers (the simulated follower's).
  std::int64_t largest_lag() const {
    std::int64_t lag = 0;
    for (const auto& f : sc_.faults.schedule)
      if (f.kind == fk::redis_failover) lag = std::max(lag, f.replication_lag_ns);
    return lag;
  }
  // The links a partition cuts: a worker's, or every worker's (a cut of redis).
  std::vector<link_proxy*> links_cut_by(const scenario::fault_spec& f);
  // Every worker's link does the same (hold, release, cut, heal, close).
  void all_links(void (link_proxy::*act)()) {
    for (auto& l : links_) ((*l).*act)();
  }
  void spawn_worker(worker& w);
  // Runs `a` on the loop; finish() (or a crash) cancels it through the task returned.
  task& spawn(awaitable<void> a);
  static awaitable<void> run_task(awaitable<void> a) {
    co_await asio::this_coro::throw_if_cancelled(false);
    co_await std::move(a);
  }
  // Cancels `t` now and again every millisecond until it has ended: a cancellation reaches only the
  // operation a coroutine waits on, and one that waits on a call (which no cancellation stops) would
  // otherwise go on to its next wait.
  void cancel(task& t);
  void notify() {
    for (auto& w : workers_)
      if (w->idle) w->idle->cancel();
  }
  // Ends the run once nothing is left to do: every arrival queued, no worker on an item, no work at the
  // portal, and the queue empty or no worker alive to take it (nor one to come back).
  void maybe_finish() {
    if (!arrivals_done_ || busy_ != 0 || in_portal_ != 0) return;
    const bool any_alive =
        std::any_of(workers_.begin(), workers_.end(), [](const auto& w) { return w->alive && !w->retired && !w->exited; });
    if (queue_.empty() || (!any_alive && restarts_pending_ == 0)) end_of_work();
  }
  // The work is over (every item ended, or none can be taken): liveness's rules at the end, then finish().
  void end_of_work();
  // The last of liveness's rules: one lease after the end, no permit still live by the server's clock.
  awaitable<void> permits_left_check();
  // An answer to worker `wi`'s acquire, read by its protocol's rule: liveness's progress rule.
  void answered(std::size_t wi, client_t::reading r);
  void fail(std::string why) {
    if (!result_.inconclusive) result_.inconclusive = std::move(why);
    finish();
  }
  void finish();
  // A watched invariant broke: the run has shown what it can, and ends.
  void stop_at_break() {
    if (done_) return;
    result_.stopped_at_break = true;
    finish();
  }
  bool over() const { return done_; }
  // Whether the scenario checks `name` (checks.invariants; none given: every one): a break of one it does
  // not check is recorded and ends nothing.
  bool checked(const char* name) const { return watches(sc_, name); }

  const scenario::scenario& sc_;
  gate::lease_client_config cfg_;  // scaled
  run_options opts_;
  asio::io_context io_;
  std::unique_ptr<redis_server> server_;  // the primary the workers reach
  persistence keep_ = persistence::none;  // every server's: the first restart's
  // The failover's replica, synced through a link as late as the failover's replication lag.
  std::unique_ptr<redis_server> replica_;
  std::unique_ptr<link_proxy> replication_;
  bool replica_ready_ = false;  // replica_ has synced with the primary
  std::vector<std::unique_ptr<link_proxy>> retired_links_;  // replication links of replicas since promoted
  std::vector<std::unique_ptr<redis_server>> retired_;  // primaries a failover replaced
  // Each worker's link to the server: its latency, its partitions, the server's downtime in a failover.
  std::vector<std::unique_ptr<link_proxy>> links_;
  // The monitor's own connections to the primary (a failover adds one; the last is the one asked) and the
  // set-up's clients. Kept to the end: a call may be under way on an earlier one.
  std::vector<std::unique_ptr<gate::resp_transport>> watches_;
  std::vector<std::unique_ptr<gate::resp_transport>> setup_transports_;  // (and the replica's sync check)
  std::vector<std::unique_ptr<client_t>> setup_clients_;
  bool switching_ = false;  // a failover is under way: no primary to watch
  steady::time_point t0_{};
  std::deque<item> queue_;
  std::vector<item> items_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<std::unique_ptr<task>> tasks_;  // one a coroutine, kept to the end
  std::int64_t outstanding_ = 0;  // coroutines not yet ended
  bool arrivals_done_ = false;
  bool done_ = false;
  bool stranded_ = false;
  steady::time_point done_at_{};
  std::int64_t in_portal_ = 0;
  std::int64_t busy_ = 0;  // workers on an item
  std::int64_t restarts_pending_ = 0;  // crashed workers that will come back
  bool ending_ = false;  // end_of_work() ran: the last check is under way
  // The holders as the monitor last read them: live by the server's clock then, and when (real time).
  std::int64_t live_read_ = 0;
  std::optional<steady::time_point> live_read_at_;
  // A stretch of refusals with capacity free (liveness's progress rule): since when (real time), how many,
  // the most permits live at them.
  std::optional<steady::time_point> starved_since_;
  std::int64_t starved_since_ns_ = 0;  // (scenario time)
  std::int64_t starved_refusals_ = 0;
  std::int64_t starved_live_max_ = 0;
  run_result result_;
};

client_t& real_fleet::new_generation(worker& w) {
  w.transports.push_back(
      std::make_unique<gate::resp_transport>(io_.get_executor(), loopback(links_[w.index]->port()), call_timeout()));
  worker* raw = &w;
  w.clients.push_back(std::make_unique<client_t>(
      io_.get_executor(), *w.transports.back(), cfg_, [this, raw] { return wall_ms(*raw); },
      [raw](std::int64_t ceiling) {
        return ceiling <= 0 ? 0
                            : static_cast<std::int64_t>(raw->jitter.uniform_u64(static_cast<std::uint64_t>(ceiling) + 1));
      }));
  // What this generation's process reads; a crashed one reads nothing more.
  w.clients.back()->on_reading([this, raw, gen = w.generation](client_t::reading r) {
    if (raw->alive && raw->generation == gen) answered(raw->index, r);
  });
  return *w.clients.back();
}

awaitable<void> real_fleet::sleep_until(steady::time_point t) {
  asio::steady_timer timer(io_, t);
  (void)co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

awaitable<bool> real_fleet::checkpoint(worker& w, std::uint64_t gen) {
  for (;;) {
    if (done_ || w.generation != gen || !w.alive) co_return false;
    if (steady::now() >= w.paused_until) co_return true;
    co_await sleep_until(w.paused_until);
  }
}

awaitable<void> real_fleet::feed() {
  for (const item& it : items_) {
    co_await sleep_until(real_at(it.at_ns));
    if (done_) co_return;
    const auto late = std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - real_at(it.at_ns)).count();
    result_.arrival_late_max_real_ns = std::max<std::int64_t>(result_.arrival_late_max_real_ns, late);
    queue_.push_back(it);
    ++result_.items;
    notify();
  }
  arrivals_done_ = true;
  notify();
  maybe_finish();
}

awaitable<void> real_fleet::portal_work(std::size_t wi, item it, std::shared_ptr<bool> slot) {
  ++in_portal_;
  result_.portal.see(in_portal_, scenario_now(),
                     "worker " + std::to_string(wi) + " started item " + std::to_string(it.number) + ": " +
                         std::to_string(in_portal_) + " requests at work at once at the portal, above its cap " +
                         std::to_string(result_.portal.bound));
  if (!result_.portal.holds() && checked("portal_inflight_le_cap")) stop_at_break();
  co_await sleep_until(steady::now() + std::chrono::nanoseconds(real_ns(it.service_ns)));
  if (*slot) {  // (else its client's close freed it already: client_closed)
    *slot = false;
    --in_portal_;
  }
  maybe_finish();
}

awaitable<void> real_fleet::work(worker& w, std::uint64_t gen) {
  // No try-block in this coroutine: a cancellation at a co_await must reach the coroutine's own
  // handler (spawn's), which a try-block around it keeps from happening under GCC 12.
  for (;;) {
    if (!co_await checkpoint(w, gen)) co_return;
    if (w.retired) {
      maybe_finish();
      co_return;
    }
    if (queue_.empty()) {
      if (arrivals_done_) {
        maybe_finish();
        co_return;
      }
      if (!w.idle) w.idle = std::make_unique<asio::steady_timer>(io_);
      w.idle->expires_at(steady::time_point::max());
      (void)co_await w.idle->async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    const item it = queue_.front();
    queue_.pop_front();
    ++busy_;
    struct done_guard {
      real_fleet& f;
      ~done_guard() {
        --f.busy_;
        f.maybe_finish();
      }
    } guard{*this};
    client_t& client = *w.clients.back();
    const std::string token = "w" + std::to_string(w.index) + "-" + std::to_string(it.number);
    const gate::acquire_outcome got = co_await client.acquire(token);
    if (!co_await checkpoint(w, gen)) co_return;
    if (got.ec && sc_.fleet.on_acquire_timeout == scenario::acquire_timeout_policy::requeue_and_exit) {
      // run_fleet: the item goes back to the tail of the queue and this worker's loop ends.
      queue_.push_back(it);
      ++result_.requeued;
      w.exited = true;
      notify();
      co_return;
    }
    if (got.ec) {
      ++result_.deferred;
      continue;
    }
    std::shared_ptr<bool> holding = std::make_shared<bool>(true);
    struct stop_renewing {
      std::shared_ptr<bool> h;
      ~stop_renewing() { *h = false; }
    } renewing{holding};
    if (cfg_.renew_every_ns > 0) spawn(renewer(w, gen, client, got.token, holding));
    w.slot = std::make_shared<bool>(true);
    spawn(portal_work(w.index, it, w.slot));
    // The client waits for the work to end, or until its read timeout when its protocol releases then, or
    // when the portal stops the work as its client closes (free_slot: nothing is left to wait for); or until
    // a lost renewal aborts the request, under abort_request.
    const bool frees = sc_.service.on_client_close == scenario::service_spec::client_close_policy::free_slot;
    std::int64_t waits = it.service_ns;
    if (it.client_timeout_ns < waits &&
        (frees || cfg_.proto->client.on_client_timeout == redis::timeout_permit::release))
      waits = it.client_timeout_ns;
    if (!w.portal_wait) w.portal_wait = std::make_unique<asio::steady_timer>(io_);
    w.aborted = false;
    w.portal_wait->expires_after(std::chrono::nanoseconds(real_ns(waits)));
    (void)co_await w.portal_wait->async_wait(asio::as_tuple(asio::use_awaitable));
    if (!co_await checkpoint(w, gen)) co_return;  // crashed at work: it never releases
    if (waits < it.service_ns || w.aborted) client_closed(w);  // its read timeout, or the request it gave up
    *holding = false;
    (void)co_await client.release(got.token);
    if (!co_await checkpoint(w, gen)) co_return;
    ++(w.aborted ? result_.aborted : result_.completed);
  }
}

task& real_fleet::spawn(awaitable<void> a) {
  tasks_.push_back(std::make_unique<task>());
  task& t = *tasks_.back();
  ++outstanding_;
  // Every coroutine ends by returning, or by an exception (a cancelled wait, at the end or a crash): either is
  // its end. Each turns off throw_if_cancelled first (run_task), so a cancellation shows only as the error of
  // the operation it cancelled.
  asio::co_spawn(io_, run_task(std::move(a)), asio::bind_cancellation_slot(t.signal.slot(), [this, &t](std::exception_ptr) {
    t.ended = true;
    --outstanding_;
  }));
  return t;
}

void real_fleet::cancel(task& t) {
  if (t.ended) return;
  t.signal.emit(asio::cancellation_type::terminal);
  auto again = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(1));
  again->async_wait([this, &t, again](const boost::system::error_code&) { cancel(t); });
}

awaitable<void> real_fleet::crash_worker(worker& w, std::optional<std::int64_t> restart_after_ns) {
  if (!w.alive) co_return;
  w.alive = false;
  ++w.generation;
  ++result_.crashed;
  client_closed(w);  // the dead process's connection to the portal closes with it
  // The process dies at once: whatever its loop waits on (a backoff, a call, its work) ends now.
  if (w.live != nullptr) cancel(*w.live);
  w.live = nullptr;
  if (!restart_after_ns) {
    maybe_finish();
    co_return;
  }
  ++restarts_pending_;
  co_await sleep_until(steady::now() + std::chrono::nanoseconds(real_ns(*restart_after_ns)));
  --restarts_pending_;
  if (done_) co_return;
  w.alive = true;
  w.retired = false;  // a new process
  w.exited = false;
  spawn_worker(w);
}

awaitable<void> real_fleet::renewer(worker& w, std::uint64_t gen, client_t& c, std::string token,
                                    std::shared_ptr<bool> holding) {
  // A paused process renews nothing: each renewal first waits out the worker's pause.
  worker* raw = &w;
  // (A plain lambda that returns the coroutine: a coroutine lambda's captures would be its own.)
  std::function<awaitable<void>()> ready = [this, raw] { return wait_out_pause(*raw); };
  const bool kept = co_await c.keep_renewed(std::move(token), holding, std::move(ready));
  if (kept || !*holding || done_ || w.generation != gen || !w.alive) co_return;
  switch (cfg_.proto->client.on_renewal_lost) {
    case redis::renewal_loss::keep_working: break;
    case redis::renewal_loss::stop_new_work:
      if (!w.retired) ++result_.retired;
      w.retired = true;
      break;
    case redis::renewal_loss::abort_request:
      w.aborted = true;
      if (w.portal_wait) w.portal_wait->cancel();
      break;
    case redis::renewal_loss::crash_process:
      // The unhandled lost-lock error: the process dies with its work, and its supervisor restarts it.
      co_await crash_worker(w, cfg_.proto->client.restart_after_ns);
      break;
  }
}

void real_fleet::spawn_worker(worker& w) {
  new_generation(w);
  w.live = &spawn(work(w, w.generation));
}

real_fleet::holders_watch real_fleet::watch_of() const {
  const redis::protocol& p = *cfg_.proto;
  holders_watch w;
  w.hash = p.holders.shape == redis::holders_shape::hash;
  w.offset_ms = p.holders.scores == redis::score_meaning::acquired_at ? cfg_.lease_ms : 0;
  // The protocol's holders key, its placeholders filled as the simulator fills them (lease_world.cpp).
  redis::call_values values;
  values.key = cfg_.key;
  values.limit = cfg_.limit;
  values.lease_ms = cfg_.lease_ms;
  const std::string holders = redis::expand(p.holders.key, values);
  w.req.argv = {"EVAL", monitor_script, "1", holders};
  w.counted = std::string(w.hash ? "HLEN" : "ZCARD") + " " + holders;
  return w;
}

awaitable<std::optional<holders_read>> real_fleet::read_now(const holders_watch& w) {
  if (switching_ || !server_->up() || server_->paused()) co_return std::nullopt;
  auto [ec, answer] = co_await watches_.back()->async_command(w.req, asio::as_tuple(asio::use_awaitable));
  if (ec) co_return std::nullopt;
  co_return read_holders(answer, w.hash);
}

awaitable<void> real_fleet::monitor() {
  const holders_watch w = watch_of();
  while (!done_) {
    {
      const std::optional<holders_read> h = co_await read_now(w);
      if (h && !done_) {
        const auto members = static_cast<std::int64_t>(h->scores.size());
        result_.holders.see(members, scenario_now(),
                            std::to_string(members) + " members in the holders key at the server (" + w.counted +
                                ", a member counted until it is removed, past its lease too), above the limit " +
                                std::to_string(result_.holders.bound));
        live_read_ = h->live_at(h->server_now_ms, w.offset_ms);
        live_read_at_ = steady::now();
        if (!result_.holders.holds() && checked("gate_inflight_le_cap")) stop_at_break();
      }
    }
    co_await sleep_until(steady::now() + sample_every);
  }
}

void real_fleet::answered(std::size_t wi, client_t::reading r) {
  if (done_ || ending_ || !checked("liveness")) return;
  liveness_check& l = result_.live;
  if (r == client_t::reading::granted) {
    ++l.grants;
    starved_since_.reset();  // progress
    return;
  }
  ADMIT_ASSERT(r == client_t::reading::refused, "only what the rule read is told");
  ++l.refusals;
  const steady::time_point now = steady::now();
  if (!live_read_at_ || now - *live_read_at_ > sample_fresh) {
    ++l.refusals_unjudged;  // no fresh read of the holders: neither progress nor starvation
    return;
  }
  if (live_read_ >= cfg_.limit) {
    starved_since_.reset();  // refused at the limit: the gate is doing its job
    return;
  }
  ++l.refusals_free;
  const std::int64_t at_ns = scenario_now();
  if (!starved_since_) {
    starved_since_ = now;
    starved_since_ns_ = at_ns;
    starved_refusals_ = 0;
    starved_live_max_ = 0;
  }
  ++starved_refusals_;
  starved_live_max_ = std::max(starved_live_max_, live_read_);
  l.longest_free_ns = std::max(l.longest_free_ns, at_ns - starved_since_ns_);
  ADMIT_ASSERT(starved_live_max_ < cfg_.limit, "a starved stretch stays below the limit");
  // The bound in real time: four of the (scaled) leases.
  if (now - *starved_since_ <= std::chrono::milliseconds(4 * cfg_.lease_ms)) return;
  l.broke(at_ns, "refused_with_free_capacity",
          "acquires were refused from " + world::span_text(starved_since_ns_) + " to " + world::span_text(at_ns) + " (" +
              std::to_string(starved_refusals_) + " refusals, the last worker " + std::to_string(wi) +
              "'s) while at most " + std::to_string(starved_live_max_) + " of the limit " + std::to_string(cfg_.limit) +
              " permits were live by the server's clock (as read every " + std::to_string(sample_every.count()) +
              " ms of real time): longer than the progress bound (" + world::span_text(l.bound_ns) + ", four leases)");
  stop_at_break();
}

void real_fleet::end_of_work() {
  if (done_ || ending_) return;
  ending_ = true;
  if (!checked("liveness")) {
    finish();
    return;
  }
  liveness_check& l = result_.live;
  const std::int64_t at_ns = scenario_now();
  if (!queue_.empty()) {
    std::int64_t exited = 0, retired = 0, dead = 0;
    for (const auto& w : workers_) {
      exited += w->exited ? 1 : 0;
      retired += w->retired ? 1 : 0;
      dead += w->alive ? 0 : 1;
    }
    l.broke(at_ns, "items_never_ended",
            world::count_text(static_cast<std::int64_t>(queue_.size()), "work item", "work items") +
                " never ended: no worker was left to take them (" +
                std::to_string(exited) + " exited when an acquire gave up, " + std::to_string(retired) +
                " stopped taking work after a lost renewal, " + std::to_string(dead) + " crashed for good)");
    finish();
    return;
  }
  if (result_.items != 0 && l.grants == 0) {
    l.broke(at_ns, "never_granted",
            world::count_text(result_.items, "work item", "work items") + " arrived and no acquire was granted (" +
                world::count_text(l.refusals, "answer", "answers") + " read as refusals)");
    finish();
    return;
  }
  spawn(permits_left_check());
}

awaitable<void> real_fleet::permits_left_check() {
  // One read of the holders, as soon as the server answers (within a second), judged one lease (and a
  // millisecond) later by the server's clock, as the simulator judges the end (lease_world.cpp).
  const holders_watch w = watch_of();
  const steady::time_point give_up = steady::now() + std::chrono::seconds(1);
  std::optional<holders_read> h;
  while (!done_ && !h && steady::now() < give_up) {
    h = co_await read_now(w);
    if (!h) co_await sleep_until(steady::now() + sample_every);
  }
  if (done_) co_return;
  if (!h) {
    result_.live.permits_left_unjudged = true;
  } else if (const std::int64_t left = h->live_at(h->server_now_ms + cfg_.lease_ms + 1, w.offset_ms); left != 0) {
    result_.live.broke(scenario_now(), "permits_left",
                       world::count_text(left, "permit", "permits") +
                           " still held one lease after the end (by the server's clock)");
  }
  finish();
}

awaitable<void> real_fleet::setup() {
  if (cfg_.proto->setup.calls.empty()) co_return;
  // On a connection of its own, straight to the server (as an operator's deploy step would run it).
  setup_transports_.push_back(std::make_unique<gate::resp_transport>(io_.get_executor(), endpoint(), call_timeout()));
  setup_clients_.push_back(std::make_unique<client_t>(
      io_.get_executor(), *setup_transports_.back(), cfg_,
      [] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
      },
      [](std::int64_t) { return std::int64_t{0}; }));
  const boost::system::error_code ec = co_await setup_clients_.back()->setup();
  if (ec) fail("the protocol's set-up failed against redis-server: " + ec.message());
}

awaitable<void> real_fleet::replica_synced() {
  if (!replica_) co_return;
  setup_transports_.push_back(
      std::make_unique<gate::resp_transport>(io_.get_executor(), loopback(replica_->port()), std::chrono::seconds(1)));
  gate::resp_transport& ask = *setup_transports_.back();
  gate::command_request req;
  req.argv = {"INFO", "replication"};
  const steady::time_point deadline = steady::now() + std::chrono::seconds(10);
  while (!done_) {
    auto [ec, answer] = co_await ask.async_command(req, asio::as_tuple(asio::use_awaitable));
    if (!ec && answer.type == redis::reply::kind::bulk && answer.text.find("master_link_status:up") != std::string::npos) {
      replica_ready_ = true;
      co_return;
    }
    if (steady::now() >= deadline) {
      fail("the replica (a failover's, or the one WAIT counts) did not sync with the primary within 10 s; its log ends: " + replica_->log_tail());
      co_return;
    }
    co_await sleep_until(steady::now() + std::chrono::milliseconds(10));
  }
}

std::optional<std::string> real_fleet::start_replica(std::int64_t lag_ns, bool wait) {
  ADMIT_ASSERT(!replica_, "one replica at a time");
  replication_ = std::make_unique<link_proxy>(
      io_.get_executor(), server_->port(),
      link_proxy::delays{std::chrono::nanoseconds(0), std::chrono::nanoseconds(real_ns(lag_ns))},
      [this](const std::string& why) { fail("the replication link failed: " + why); });
  try {
    replica_ = std::make_unique<redis_server>(opts_.redis_program, keep_, replication_->port(), wait);
  } catch (const server_error& e) {
    return std::string("the replica (a failover's, or the one WAIT counts) could not start: ") + e.what();
  }
  return std::nullopt;
}

awaitable<void> real_fleet::replica_up_and_synced() {
  // (No co_await inside a try-block: see work().)
  for (;;) {
    std::optional<std::string> failed;
    bool up = false;
    try {
      up = replica_->ready();
    } catch (const server_error& e) {
      failed = e.what();
    }
    if (failed) {
      fail("the replica (a failover's, or the one WAIT counts) could not start: " + *failed);
      co_return;
    }
    if (up) break;
    co_await sleep_until(steady::now() + std::chrono::milliseconds(1));
    if (done_) co_return;
  }
  co_await replica_synced();
}

const scenario::fault_spec* real_fleet::next_failover(const scenario::fault_spec& f) const {
  const scenario::fault_spec* next = nullptr;
  for (const auto& g : sc_.faults.schedule)
    if (&g != &f && g.kind == fk::redis_failover && (g.at_ns > f.at_ns || (g.at_ns == f.at_ns && &g > &f)) &&
        (next == nullptr || g.at_ns < next->at_ns))
      next = &g;
  return next;
}

std::vector<link_proxy*> real_fleet::links_cut_by(const scenario::fault_spec& f) {
  using nk = scenario::node_ref::kind;
  std::optional<std::int64_t> worker;
  if (f.between) worker = f.between->first.k == nk::worker ? f.between->first.worker : f.between->second.worker;
  else if (f.target && f.target->k == nk::worker) worker = f.target->worker;
  std::vector<link_proxy*> out;
  for (std::size_t i = 0; i < links_.size(); ++i)
    if (!worker || static_cast<std::int64_t>(i) == *worker) out.push_back(links_[i].get());
  ADMIT_ASSERT(!out.empty(), "a partition cuts a link of the fleet's");
  return out;
}

awaitable<void> real_fleet::fault(const scenario::fault_spec& f) {
  co_await sleep_until(real_at(f.at_ns));
  if (done_) co_return;
  fault_timing t;
  t.kind = std::string(scenario::fault_kind_names[static_cast<std::size_t>(f.kind)]);
  t.target = f.target ? scenario::to_string(*f.target) : "";
  t.intended_ns = f.at_ns;
  t.achieved_ns = scenario_now();
  t.late_real_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - real_at(f.at_ns)).count();
  result_.faults.push_back(t);
  const std::size_t timing = result_.faults.size() - 1;
  const bool on_worker = f.target && f.target->k == scenario::node_ref::kind::worker;
  const std::int64_t dur = f.duration_ns.value_or(0);
  switch (f.kind) {
    case fk::clock_step:
      ADMIT_ASSERT(on_worker, "unsupported() refuses a step of the server's clock");
      workers_[static_cast<std::size_t>(f.target->worker)]->offset_real_ns += real_ns(f.step_ns);
      break;
    case fk::pause:
      if (on_worker) {
        worker& w = *workers_[static_cast<std::size_t>(f.target->worker)];
        w.paused_until = std::max(w.paused_until, steady::now() + std::chrono::nanoseconds(real_ns(dur)));
      } else {
        server_->pause();
        co_await sleep_until(steady::now() + std::chrono::nanoseconds(real_ns(dur)));
        if (server_->up() && server_->paused()) server_->resume();
      }
      break;
    case fk::crash:
      ADMIT_ASSERT(on_worker, "a crash strikes a worker");
      co_await crash_worker(*workers_[static_cast<std::size_t>(f.target->worker)], f.duration_ns);
      break;
    case fk::redis_restart: {
      if (server_->paused()) server_->resume();
      // The links hold what the workers send from the kill until the server answers again, past the downtime:
      // the simulated restart takes no time but its downtime, the real server's start does. What is sent
      // during the downtime is lost, as to a node that is down.
      all_links(&link_proxy::hold);
      server_->crash();
      if (dur > 0) {
        all_links(&link_proxy::cut);
        co_await sleep_until(steady::now() + std::chrono::nanoseconds(real_ns(dur)));
        all_links(&link_proxy::heal);
      }
      if (done_) co_return;
      // The loop runs on while the server starts. (No co_await inside a try-block: see work().)
      std::optional<std::string> failed;
      try {
        server_->launch(persistence_of(f.persist));
      } catch (const server_error& e) {
        failed = e.what();
      }
      while (!failed) {
        bool up = false;
        try {
          up = server_->ready();
        } catch (const server_error& e) {
          failed = e.what();
        }
        if (up || failed) break;
        co_await sleep_until(steady::now() + std::chrono::milliseconds(1));
        if (done_) co_return;
      }
      if (failed) {
        fail(std::string("the restart at ") + at_text(f.at_ns) + " could not be made: " + *failed);
        co_return;
      }
      came_back(timing, f.at_ns + dur);
      all_links(&link_proxy::release);
      if (cfg_.proto->setup.again_after_restart) co_await setup();
      break;
    }
    case fk::partition: {
      // Bytes either way are dropped at the worker's link for the cut's duration (link_proxy.hpp).
      const std::vector<link_proxy*> cut = links_cut_by(f);
      for (link_proxy* l : cut) l->cut();
      co_await sleep_until(steady::now() + std::chrono::nanoseconds(real_ns(dur)));
      for (link_proxy* l : cut) l->heal();
      break;
    }
    case fk::redis_failover: {
      // Its replica was started with the run (the first failover) or by the failover before it, and must
      // have synced by now: a failover that comes sooner (during the one before it, or in the same instant)
      // cannot be made.
      if (switching_ || !replica_ || !replica_ready_) {
        fail("the failover at " + at_text(f.at_ns) + " could not be made: " +
             (switching_ ? std::string("it came during the downtime of the failover before it")
                         : std::string("its replica, started by the failover before it, had not yet synced with the "
                                       "primary")));
        co_return;
      }
      // The primary dies with the writes its replica had not yet been sent (those of the last
      // replication_lag), the replica is made primary, and the workers reach it after the downtime.
      if (server_->paused()) server_->resume();
      replication_->close();
      server_->crash();
      switching_ = true;
      all_links(&link_proxy::cut);
      if (!replica_->promote()) {
        fail("the failover at " + at_text(f.at_ns) + " could not be made: the replica did not take REPLICAOF NO ONE; its "
             "log ends: " + replica_->log_tail());
        co_return;
      }
      retired_.push_back(std::move(server_));
      server_ = std::move(replica_);
      retired_links_.push_back(std::move(replication_));
      replica_ready_ = false;
      // The next failover's replica (or, for a client that waits for replicas, the replica its WAITs count),
      // a new process synced with the new primary during the downtime (as the simulated node starts a new
      // follower holding what the promoted one holds). Its lag: the next failover's, else the largest.
      const scenario::fault_spec* next = next_failover(f);
      if (next != nullptr || cfg_.proto->client.acknowledge) {
        if (std::optional<std::string> why = start_replica(next ? next->replication_lag_ns : largest_lag(), false)) {
          fail((next ? "the failover at " + at_text(next->at_ns) + " could not be made: " : std::string()) + *why);
          co_return;
        }
        spawn(replica_up_and_synced());
      }
      if (dur > 0) co_await sleep_until(steady::now() + std::chrono::nanoseconds(real_ns(dur)));
      for (auto& l : links_) {
        l->retarget(server_->port());
        l->heal();
      }
      watches_.push_back(std::make_unique<gate::resp_transport>(io_.get_executor(), endpoint(), std::chrono::seconds(1)));
      switching_ = false;
      came_back(timing, f.at_ns + dur);
      if (done_) co_return;
      if (cfg_.proto->setup.again_after_restart) co_await setup();
      break;
    }
    case fk::client_timeout_burst:
      // Made with the items (run()): those that arrive in its window carry its shorter read timeout.
      break;
  }
}

void real_fleet::finish() {
  if (done_) return;
  done_ = true;
  done_at_ = steady::now();
  result_.ended_ns = scenario_now();
  notify();
  if (server_ && server_->up() && server_->paused()) server_->resume();
  // The links end every connection they carry (and so their pending reads): the loop can run out.
  all_links(&link_proxy::close);
  if (replication_) replication_->close();
  for (auto& w : workers_) ++w->generation;
  // Every coroutine stops at what it waits on (from the loop, not from inside the coroutine that ended the run).
  asio::post(io_, [this] {
    for (auto& t : tasks_) cancel(*t);
  });
}

run_result real_fleet::run() {
  result_.portal.bound = sc_.service.portal_cap.value_or(cfg_.limit);
  result_.margin_real_ns = cfg_.lease_ms * 1'000'000 / 20;
  result_.holders.bound = cfg_.limit;
  result_.live.bound_ns = 4 * sc_.gates.at(0).lease.lease_ns;
  result_.live.watched = checked("liveness");
  result_.portal.watched = checked("portal_inflight_le_cap");
  result_.holders.watched = checked("gate_inflight_le_cap");
  // The items: arrivals as the simulator draws them; service times their own or drawn.
  {
    world::arrival_source src(sc_, opts_.seed);
    // The same draws as the simulated run (work_items.hpp: the "service" stream, in arrival order).
    sim::prng service = sim::substream(opts_.seed, "service");
    while (const std::optional<world::arrival> a = src.next()) {
      item it;
      it.number = a->number + 1;
      it.at_ns = a->at_ns;
      it.service_ns = a->service_ns ? *a->service_ns : sc_.service.service_time.sample(service);
      it.client_timeout_ns = read_timeout_at(a->at_ns, a->client_timeout_ns);
      items_.push_back(it);
    }
  }
  // File descriptors: a worker's connection is three here (its socket and its link's two), and as many
  // again for its pub/sub connection (a protocol's wake_on); a crashed generation's may linger, and the
  // monitor, the set-up and the links' listeners take a few more. The soft limit is raised as far as the
  // hard one allows; a run that would still run out cannot be judged.
  {
    const std::int64_t per_worker = cfg_.proto->client.wake_on ? 12 : 6;
    const auto need = static_cast<rlim_t>(sc_.fleet.workers * per_worker + 64);
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < need) {
      lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? need : std::min(need, lim.rlim_max);
      (void)::setrlimit(RLIMIT_NOFILE, &lim);
      (void)::getrlimit(RLIMIT_NOFILE, &lim);
      if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < need) {
        result_.inconclusive = "a real run of " + std::to_string(sc_.fleet.workers) + " workers needs " +
                               std::to_string(need) + " file descriptors, and the limit is " +
                               std::to_string(lim.rlim_cur) + " (ulimit -n)";
        return result_;
      }
    }
  }
  // The server's persistence: the first restart's (what the restarts keep is what it writes before them).
  for (const auto& f : sc_.faults.schedule)
    if (f.kind == fk::redis_restart) {
      keep_ = persistence_of(f.persist);
      break;
    }
  try {
    server_ = std::make_unique<redis_server>(opts_.redis_program, keep_);
  } catch (const server_error& e) {
    result_.inconclusive = std::string("redis-server could not start: ") + e.what();
    return result_;
  }
  result_.server_version = server_->version();
  watches_.push_back(std::make_unique<gate::resp_transport>(io_.get_executor(), endpoint(), std::chrono::seconds(1)));
  // The first failover's replica, behind a link that holds what the primary sends for its replication lag
  // (each later failover's is started once the one before it is made); for a client that waits for
  // replicas (client.acknowledge), a replica all along, as the simulated node has a follower all along.
  const scenario::fault_spec* first_failover = nullptr;
  for (const auto& f : sc_.faults.schedule)
    if (f.kind == fk::redis_failover && (first_failover == nullptr || f.at_ns < first_failover->at_ns)) first_failover = &f;
  if (first_failover != nullptr || cfg_.proto->client.acknowledge)
    if (std::optional<std::string> why = start_replica(first_failover ? first_failover->replication_lag_ns : 0, true)) {
      result_.inconclusive = std::move(why);
      return result_;
    }
  // The simulated one-way latency between a worker and Redis, made real on each worker's link.
  const std::chrono::nanoseconds latency(real_ns(world::redis_latency_ns));
  for (std::int64_t i = 0; i < sc_.fleet.workers; ++i)
    links_.push_back(std::make_unique<link_proxy>(io_.get_executor(), server_->port(), link_proxy::delays{latency, latency},
                                                  [this, i](const std::string& why) {
                                                    fail("worker " + std::to_string(i) + "'s link failed: " + why);
                                                  }));
  for (std::int64_t i = 0; i < sc_.fleet.workers; ++i) {
    auto w = std::make_unique<worker>();
    w->index = static_cast<std::size_t>(i);
    const scenario::clock_spec c = sc_.fleet.clock_of(i);
    w->offset_real_ns = real_ns(c.offset_ns);
    w->drift_ppm = c.drift_ppm;
    w->jitter = sim::substream(opts_.seed, "jitter/" + std::to_string(i));
    workers_.push_back(std::move(w));
  }
  spawn([](real_fleet* self) -> awaitable<void> {
    co_await self->replica_synced();
    if (self->done_) co_return;
    co_await self->setup();
    if (self->done_) co_return;
    self->t0_ = steady::now();
    for (auto& w : self->workers_) self->spawn_worker(*w);
    for (const auto& f : self->sc_.faults.schedule) self->spawn(self->fault(f));
    self->spawn(self->monitor());
    co_await self->feed();
  }(this));
  // The wall limit and SIGINT.
  auto guard = std::make_shared<asio::steady_timer>(io_);
  const steady::time_point limit = steady::now() + opts_.wall_limit;
  std::function<void()> watch_clock = [this, guard, limit, &watch_clock] {
    guard->expires_after(std::chrono::milliseconds(20));
    guard->async_wait([this, guard, limit, &watch_clock](const boost::system::error_code&) {
      if (done_) {
        // All ended: nothing of the run is left to wait for. What the loop still holds (a connection a
        // server has not closed yet) is dropped with it, so that no socket outlives the run's bound.
        if (outstanding_ == 0) {
          io_.stop();
          return;
        }
        if (steady::now() - done_at_ > std::chrono::seconds(60)) {
          // Something would not end (it cannot, by the calls' timeouts; this is the bound's guard).
          stranded_ = true;
          if (!result_.inconclusive) result_.inconclusive = "the run's clients did not stop within 60 s of its end";
          io_.stop();
          return;
        }
        watch_clock();
        return;
      }
      if (opts_.interrupted != nullptr && opts_.interrupted->load()) {
        fail("interrupted (SIGINT or SIGTERM)");
        return;
      }
      if (steady::now() >= limit) {
        fail("the run did not end within its wall limit of " + std::to_string(opts_.wall_limit.count()) + " s");
        return;
      }
      watch_clock();
    });
  };
  watch_clock();
  io_.run();
  ADMIT_ASSERT(done_, "the loop runs out only after the run's end");
  return result_;
}

}  // namespace

void level_check::see(std::int64_t value, std::int64_t at_ns, const std::string& detail) {
  ++samples;
  if (value > peak) {
    peak = value;
    peak_at_ns = at_ns;
  }
  if (value > bound && !first_at_ns) {
    first_at_ns = at_ns;
    first_detail = detail;
  }
}

bool watches(const scenario::scenario& sc, std::string_view invariant) {
  const std::vector<std::string>& only = sc.checks.invariants;
  const bool checked = only.empty() || std::find(only.begin(), only.end(), invariant) != only.end();
  if (invariant == "liveness") return checked && !sc.checks.liveness_horizon_ns;
  return checked && (invariant == "portal_inflight_le_cap" || invariant == "gate_inflight_le_cap");
}

std::optional<std::pair<std::string, std::string>> unsupported(const scenario::scenario& sc,
                                                               const gate::lease_client_config& cfg) {
  using P = std::pair<std::string, std::string>;
  if (sc.gates.size() != 1 || sc.gates[0].kind != scenario::gate_kind::lease)
    return P{"/gate", "expected one lease gate (a FIFO gate runs in-process, with nothing to confirm on Redis)"};
  const scenario::gate_spec& g = sc.gates[0];
  if (g.lease.redis_nodes != 1) return P{"/gate/redis_nodes", "a real run has one redis-server so far (expected 1)"};
  if (sc.fleet.workers > real_workers_max)
    return P{"/fleet/workers", "a real run opens a connection a worker: at most " + std::to_string(real_workers_max) +
                                   ", got " + std::to_string(sc.fleet.workers)};
  if (const std::uint64_t n = world::arrival_source(sc, 0).total(); n > real_items_max)
    return P{"/workload", "a real run keeps its items in memory: at most " + std::to_string(real_items_max) + ", got " +
                              std::to_string(n)};
  if (g.process) return P{"/gate/process", "a real run drives the shipped Asio client, not a process client"};
  if (g.world_mut != scenario::world_mutation::none)
    return P{"/gate/mutation", "a mutant is the simulator's own, with nothing real to confirm"};
  if (cfg.quorum) return P{"/gate/protocol", "a quorum client needs several servers"};
  for (std::size_t i = 0; i < sc.requests.size(); ++i) {
    const scenario::request_spec& r = sc.requests[i];
    if (r.cancel_at_ns || r.fail != scenario::failure::none)
      return P{"/workload/requests/" + std::to_string(i), "a real run's requests are neither cancelled nor failed"};
  }
  int failovers = 0;
  for (std::size_t i = 0; i < sc.faults.schedule.size(); ++i) {
    const scenario::fault_spec& f = sc.faults.schedule[i];
    const std::string path = "/faults/schedule/" + std::to_string(i);
    const bool on_worker = f.target && f.target->k == scenario::node_ref::kind::worker;
    switch (f.kind) {
      case fk::clock_step:
        if (!on_worker) return P{path, "the server's clock cannot be stepped for real (a worker's can)"};
        break;
      case fk::crash:
      case fk::redis_restart: break;
      case fk::pause:
        if (!on_worker && !(f.target && f.target->k == scenario::node_ref::kind::redis))
          return P{path, "a pause strikes a worker or redis"};
        break;
      case fk::partition: break;
      case fk::redis_failover:
        if (++failovers > real_failovers_max)
          return P{path, "a real run makes at most " + std::to_string(real_failovers_max) +
                             " failovers (a replica process each)"};
        break;
      case fk::client_timeout_burst: break;
    }
  }
  return std::nullopt;
}

run_result run_real(const scenario::scenario& sc, const gate::lease_client_config& cfg, const run_options& opts) {
  ADMIT_ASSERT(!unsupported(sc, cfg).has_value(), "a real run is asked only of what it can make");
  ADMIT_ASSERT(opts.time_scale >= 0.01 && opts.time_scale <= 100, "the time scale is checked by its reader");
  auto f = std::make_unique<real_fleet>(sc, cfg, opts);
  run_result r = f->run();
  // A fleet whose loop was stopped with coroutines in it is left as it is (their frames would outlive it);
  // its server is stopped and its folder removed all the same.
  if (f->stranded()) {
    f->stop_server();
    (void)f.release();
  }
  return r;
}

}  // namespace admit::confirm
