// fleet: the workers, their clocks, their lives and their idle waits.
//
// Each worker has its own wall clock (virtual time plus an offset, a drift
// in ppm, and steps injected as faults) that the `seed` variant passes to
// the acquire script, a lease client, and a generation: a crash ends the
// generation (nothing of it runs after, not even its release) and a restart
// spawns the next. A worker loop passes a checkpoint after every wait: a
// crashed generation stops there, a paused worker waits there until its
// pause ends.
//
// Under fleet.on_acquire_timeout requeue_and_exit (the design document's
// run_fleet) a worker whose acquire gives up puts its item back and its loop
// ends (`exited`); it stays alive as a process (a crash can still strike it)
// and comes back only if a crash with a `duration` restarts it.
//
// An idle worker (no item in the queue) waits to be woken; the fleet keeps
// the idle ones by index, so that an arrival wakes the least one without
// scanning the fleet. A worker whose loop has not begun yet, and that finds
// nothing to do at its first step, waits without a coroutine: the world's
// `park` answers for that step, and the loop is launched only when the
// worker is woken to work. The events are the same as the loop's (one to
// begin, one to wake), so a fleet of 100,000 mostly idle workers holds no
// coroutine frame for the ones never used.
//
// What a worker believes: the permit it holds (`holding`), and whether it
// has been told it lost it (`lost`: its lease was reaped, its renewal found
// it gone, the node restarted or failed over). The Redis side asserts that a
// worker releasing a permit it holds either still has it in the set or has
// lost it in one of those ways. The story of a permit (when it was granted
// and renewed, how it was lost) the fleet does not keep: the Redis side
// publishes it as facts (facts.hpp), and the causes keep what they need.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/asio/lease_client.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/sim_env.hpp"
#include "sim/kernel/sim_timer.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/idle_set.hpp"
#include "sim/world/lease/network.hpp"
#include "sim/world/lease/permit_loss.hpp"
#include "sim/world/lease/process_client.hpp"
#include "sim/world/lease/work_items.hpp"
#include "sim/world/lease_world.hpp"

namespace admit::world::lease {

using client_t = gate::lease_client<sim::sim_env, redis_transport>;

// Thrown at a checkpoint of a generation that crashed.
struct worker_crashed {};

// A worker's wall clock: virtual time plus the scenario's offset and drift,
// plus the steps injected as faults.
struct worker_clock {
  scenario::clock_spec spec;
  vtime_ns step_ns = 0;

  // In ms since the Unix epoch, at virtual time `now`.
  std::int64_t wall_ms(vtime_ns now) const {
    // now * drift_ppm / 1e6 without overflow: split now into whole and partial millions.
    const std::int64_t drift = (now / 1'000'000) * spec.drift_ppm + (now % 1'000'000) * spec.drift_ppm / 1'000'000;
    return (lease_world_epoch_ms * 1'000'000 + now + spec.offset_ns + drift + step_ns) / 1'000'000;
  }
  // How far it reads from true time at `now`, had its steps been `steps_ns`.
  vtime_ns offset_ns(vtime_ns now, vtime_ns steps_ns) const {
    const std::int64_t drift = (now / 1'000'000) * spec.drift_ppm + (now % 1'000'000) * spec.drift_ppm / 1'000'000;
    return spec.offset_ns + drift + steps_ns;
  }
  vtime_ns offset_ns(vtime_ns now) const { return offset_ns(now, step_ns); }
};

// A worker's side of the gate: its transport to the Redis node, its lease
// client and the client's backoff jitter. They live in the worker itself
// (one allocation per worker, and the client beside the state it reads);
// the client keeps references to the transport and the jitter, so the
// worker never moves (the fleet holds it by pointer).
struct worker_link {
  redis_transport transport;
  sim::prng jitter{0};
  std::optional<client_t> client;  // always engaged once the fleet is built
  // A fleet whose client is a process: the worker's child, which runs the client's operations.
  std::unique_ptr<process_client> process;
};

struct worker_state {
  std::size_t index = 0;
  std::uint64_t generation = 0;
  bool alive = true;
  bool started = false;  // this generation's worker loop has run its first step
  bool idle = false;     // waiting for work (then in the fleet's idle set)
  // How this generation's loop ended, if it did: `exited` after an acquire
  // that gave up under fleet.on_acquire_timeout requeue_and_exit (its item
  // requeued); `drained` on an empty queue after the last arrival. A restart clears both.
  bool exited = false;
  bool drained = false;
  vtime_ns paused_until = 0;
  worker_clock clock;
  worker_link link;
  // Cancels the generation's loop at a crash; each generation gets its own
  // (a crashed loop may still hold a slot of the one before).
  std::unique_ptr<boost::asio::cancellation_signal> kill;
  // The signals of crashed generations, kept for the fleet's life: a crashed
  // generation's coroutine may stay suspended in a call no cancellation
  // reaches (a call lost on the network ends only at its socket timeout), and
  // when it resumes it clears its slot, which must still belong to a live
  // signal after a restart has given the worker a new one. One per restart,
  // and restarts are bounded by the faults a run draws.
  std::vector<std::unique_ptr<boost::asio::cancellation_signal>> retired_kills;
  // The idle worker loop's wait for work: its completion handler, run with
  // operation_aborted by wake().
  sim::unique_task resume;
  std::optional<std::string> holding;  // token of the permit it believes it holds
  bool lost = false;                   // told it lost the permit of its current item
  // Quorum runs: the nodes whose sets hold the current item's token (bit n: node n).
  std::uint16_t node_bits = 0;
  std::optional<work_item> current;    // the item it works on
  bool permit_granted = false;         // the current item's permit was granted (first grant recorded)
  // The current item's token: a view of the one its worker loop holds while
  // it works on the item (read only while `current` is set), so that a grant
  // is matched to the item without parsing the token.
  std::string_view token;
  vtime_ns paused_from_ns = -1;        // its last pause began (it lasts to paused_until)
  // What a lost renewal may act on, by the protocol's client policy.
  struct renewal_state {
    std::shared_ptr<bool> holding;          // the current item's renewer runs while *holding (false: done, crashed)
    bool retired = false;                   // stop_new_work: it takes no new item (until a restart)
    sim::sim_timer* portal_wait = nullptr;  // abort_request: the portal call's wait while one runs
  };
  renewal_state renewal;
};

// The checkpoint a worker's coroutine passes after every wait: nothing
// happens while the worker is clear to run; otherwise it waits out its pause,
// or throws worker_crashed. Asio's awaitable takes only awaitables and
// asynchronous operations, and both suspend: the test comes first so that
// the common case enters no coroutine frame.
#define ADMIT_CHECKPOINT(fleet, wi, gen) \
  if (!(fleet).clear_to_run((wi), (gen))) co_await (fleet).wait_until_clear((wi), (gen))

// How the fleet's clients behave around their permits (a protocol's client
// policy; the built-in variants keep the defaults, renewing only for
// `renewal`).
struct client_behaviour {
  std::optional<vtime_ns> renew_every_ns;  // set when holders renew
  redis::renewal_loss on_renewal_lost = redis::renewal_loss::keep_working;
  vtime_ns restart_after_ns = 0;  // crash_process: the process comes back after this
  redis::timeout_permit on_client_timeout = redis::timeout_permit::release;
};

class fleet {
 public:
  using loop_fn = std::function<sim::awaitable<void>(std::size_t, std::uint64_t)>;
  // The first step of a worker's loop, where it is answered without running
  // the loop: whether the world took it (the worker parked idle, or after a
  // wake, parked again or drained). `woken`: the step follows a wake, as the
  // loop's own step after its idle wait would; otherwise it is the loop's
  // very first step. Asked only while the worker is clear to run.
  using park_fn = std::function<bool(std::size_t, std::uint64_t, bool woken)>;

  fleet(sim::scheduler& sched, network& net, const gate::lease_client_config& cfg, const scenario::scenario& sc,
        std::uint64_t seed);

  std::size_t size() const noexcept { return workers_.size(); }
  const client_behaviour& behaviour() const noexcept { return behaviour_; }
  void set_behaviour(const client_behaviour& b) noexcept { behaviour_ = b; }
  worker_state& operator[](std::size_t wi) { return *workers_[wi]; }
  const worker_state& operator[](std::size_t wi) const { return *workers_[wi]; }


  // Every worker's client runs in a child of `spec` (process_client.hpp) from now on. Before start().
  // `faults`: the run's schedule (what the clients may be promised depends on the workers' clock steps).
  // The children's exchanges so far, summed over the workers (nullopt: the clients are admitsim's own).
  std::optional<world::process_exchanges> children_exchanges() const;
  void use_processes(const scenario::process_spec& spec, std::uint64_t seed, const gate::lease_client_config& cfg,
                     std::span<const scenario::fault_spec> faults);
  // The first worker's child (by index) that could not go on, if one could not: the run stopped there.
  const process::session_failure* process_failure() const noexcept;

  // --- lives ----------------------------------------------------------------
  // Begins every worker's loop; a restart begins the worker's next generation.
  void start(loop_fn loop, park_fn park);
  void restart(std::size_t wi);
  [[gnu::always_inline]] bool clear_to_run(std::size_t wi, std::uint64_t gen) const {
    const worker_state& w = *workers_[wi];
    return w.generation == gen && w.alive && sched_.now_ns() >= w.paused_until;
  }
  sim::awaitable<void> wait_until_clear(std::size_t wi, std::uint64_t gen);
  // Ends the worker's generation. `ended(item)` is told of the item it
  // worked on, before its loop is cancelled. Returns whether it held a permit.
  bool crash(std::size_t wi, const std::function<void(const work_item&)>& ended);
  // Once the world tears down, a loop that ends with an error is not judged.
  void tear_down();

  // --- idle waits -----------------------------------------------------------
  template <class Token>
  auto async_idle_wait(std::size_t wi, Token&& token);
  // Idle workers are also kept in idle_ by index, so that the next one to
  // wake is found without scanning the fleet; the order is the scan's: least
  // index first. Always inline, as are the permit counts below: the worker
  // loops and the arrivals call them on every item, and GCC otherwise keeps
  // them out of line from the large coroutine bodies.
  [[gnu::always_inline]] void set_idle(std::size_t wi, bool idle) {
    worker_state& w = *workers_[wi];
    ADMIT_ASSERT(idle_.contains(wi) == w.idle, "a worker is in the idle set exactly while it is idle");
    if (w.idle == idle) return;
    w.idle = idle;
    if (idle)
      idle_.insert(wi);
    else
      idle_.erase(wi);
  }
  [[gnu::always_inline]] void wake_one() {
    for (std::size_t i = idle_.next(); i != idle_set::npos; i = idle_.next(i + 1)) {
      worker_state& w = *workers_[i];
      ADMIT_ASSERT(w.idle, "the idle set holds only idle workers");
      if (!w.alive) continue;  // not expected (a crash clears idle), but the scan skipped such a worker
      set_idle(i, false);
      wake(w);
      return;
    }
  }
  void wake_all_idle();
  // From `park`: the worker, at the first step of generation `gen` of its
  // loop, waits idle without a coroutine; waking it takes the step again.
  void park_unstarted(std::size_t wi, std::uint64_t gen);

  // --- permits --------------------------------------------------------------
  // "w<worker>-<item>": the token of a worker's permit for an item.
  static std::string token_of(std::size_t wi, std::uint64_t number);
  // The worker starts on an item, whose token its loop holds as `token`.
  [[gnu::always_inline]] void take(std::size_t wi, const work_item& item, std::string_view token = {}) {
    worker_state& w = *workers_[wi];
    ADMIT_ASSERT(!w.holding, "a worker starts an item holding no permit");
    w.current = item;
    w.token = token;
    w.lost = false;
    w.node_bits = 0;
    w.permit_granted = false;
  }
  // Returns the holders.
  [[gnu::always_inline]] std::int64_t hold(std::size_t wi, const std::string& token) {
    worker_state& w = *workers_[wi];
    ADMIT_ASSERT(!w.holding, "a worker holds one permit at a time");
    w.holding = token;
    return ++holders_;
  }
  [[gnu::always_inline]] void drop_holding(std::size_t wi) {
    worker_state& w = *workers_[wi];
    if (!w.holding) return;
    ADMIT_ASSERT(holders_ > 0, "the holders count every worker holding a permit");
    w.holding.reset();
    --holders_;
  }
  std::int64_t holders() const noexcept { return holders_; }
  // The worker that believes it holds the permit `token` (tokens are unique per acquisition).
  const worker_state* holder_of(std::string_view token) const;
  // The worker and item a token names ("w<worker>-<item>"), if it names one of this fleet.
  std::optional<std::pair<std::size_t, std::uint64_t>> parse_token(std::string_view token) const {
    return parse_token(token, workers_.size());
  }
  // The same for a fleet of `workers` workers.
  static std::optional<std::pair<std::size_t, std::uint64_t>> parse_token(std::string_view token, std::size_t workers);
  // The server granted the permit `token`: whether it is the current item's
  // first grant (a late grant of an item given up is not; granted again under
  // the same token, the first grant is the story). Inline: every grant asks.
  [[gnu::always_inline]] bool granted(std::size_t wi, std::string_view token) {
    worker_state& w = *workers_[wi];
    if (!w.current || w.permit_granted || !of_item(w, token)) return false;
    w.permit_granted = true;
    return true;
  }
  // Whether `token` is the worker's item token or a fresh token of it ("<token>.<n>": on_lost_acquire
  // "new_token").
  static bool of_item(const worker_state& w, std::string_view token) noexcept {
    if (token.size() == w.token.size()) return token == w.token;
    return token.size() > w.token.size() + 1 && token.starts_with(w.token) && token[w.token.size()] == '.';
  }
  // The server kept the permit `token` renewed: whether its worker holds it.
  bool renewed(std::size_t wi, std::string_view token) const {
    const worker_state& w = *workers_[wi];
    return w.holding && *w.holding == token;
  }
  // A restart or failover kept the permit `token` with an older score than its
  // last renewal had set: the worker that holds it, if one does.
  const worker_state* rolled_back(std::string_view token, const permit_rollback& how) const;
  // The permit `token` left the set: which worker and item it names, whether
  // that worker is still on the item (then told it lost it), and the worker
  // that held it, if one did.
  struct loss_of {
    std::size_t worker = 0;
    std::uint64_t number = 0;
    bool current = false;
    const worker_state* holder = nullptr;
  };
  std::optional<loss_of> lost_permit(std::string_view token);
  // The node lost its state (restart, failover): every worker on an item may have lost its permit.
  void lost_all_permits();

  // --- quorum runs (N nodes) ----------------------------------------------------
  // Under the rule "majority" a permit is held while a majority of the nodes
  // hold its token: the world records its grant when the majority forms and
  // its loss when a node's loss takes it below one (a loss on a node while
  // still short of a majority, or above it, changes only the count). Under
  // "all" its grant is recorded once every node holds it, and it is lost only
  // when no node holds it any more: while one node keeps it, no other token
  // can be granted by every node in its place (that node counts it).
  void set_nodes(network* const* nets, std::size_t nodes, bool all = false);
  std::size_t nodes() const noexcept { return nodes_; }
  std::size_t majority() const noexcept { return nodes_ / 2 + 1; }
  // Node `node` granted the current item's `token`: whether enough nodes hold it now to count it granted.
  bool granted_on(std::size_t wi, std::string_view token, std::size_t node);
  // Node `node` no longer holds `token` by the holder's own release.
  void released_on(std::size_t wi, std::string_view token, std::size_t node);
  // Whether node `node` holds the current item's token of worker `wi`, as the world counts it.
  bool held_on(std::size_t wi, std::size_t node) const { return (workers_[wi]->node_bits >> node) & 1U; }
  // Node `node` lost `token` (reaped, expired, forgotten): whether that took the permit below what holds it.
  bool lost_on(std::string_view token, std::size_t node);

  // O(fleet): the counts and sets agree with the workers (end of a run).
  void audit() const;

 private:
  void spawn(worker_state& w);
  // The first step of generation `gen`: answered by `park_`, or the loop is launched.
  void begin(std::size_t wi, std::uint64_t gen, bool woken);
  void launch(worker_state& w, std::uint64_t gen);
  [[gnu::always_inline]] void wake(worker_state& w) {
    if (w.resume) sched_.post(std::move(w.resume));
    w.resume = {};
  }

  sim::scheduler& sched_;
  std::vector<std::unique_ptr<worker_state>> workers_;
  idle_set idle_;  // the indices of the idle workers
  std::int64_t holders_ = 0;
  loop_fn loop_;
  park_fn park_;
  bool tearing_down_ = false;
  client_behaviour behaviour_;
  std::size_t nodes_ = 1;
  bool all_ = false;             // the rule "all"
  std::size_t granted_at_ = 1;  // nodes holding a token for its grant to be recorded (majority, or all)
  std::size_t held_from_ = 1;   // the least number of nodes holding it for it to count held (majority, or 1)
};

// An idle worker waits for work as it would on a timer that never expires
// and is cancelled to wake it: the wake-up is posted (one event), so the
// run's order and event count are those of such a timer. The wait schedules
// nothing itself (no timer entry, no sequence number).
template <class Token>
auto fleet::async_idle_wait(std::size_t wi, Token&& token) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
      [this, &w = *workers_[wi]](auto handler) {
        w.resume = [this, h = std::move(handler)]() mutable {
          auto ex = boost::asio::get_associated_executor(h, sched_.get_executor());
          boost::asio::dispatch(ex, [h = std::move(h)]() mutable {
            std::move(h)(boost::system::error_code(boost::asio::error::operation_aborted));
          });
        };
      },
      token);
}

}  // namespace admit::world::lease
