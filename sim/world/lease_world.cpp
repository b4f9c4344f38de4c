#include "sim/world/lease_world.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <memory>
#include <optional>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/asio/lease_client.hpp"
#include "sim/kernel/awaitable.hpp"
#include "sim/scenario/builtin_protocols.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/lease/fault_injector.hpp"
#include "sim/world/lease/fleet.hpp"
#include "sim/world/lease/lease_causes.hpp"
#include "sim/world/lease/lease_coverage.hpp"
#include "sim/world/lease/lease_invariants.hpp"
#include "sim/world/lease/lease_monitors.hpp"
#include "sim/world/lease/lease_timeline.hpp"
#include "sim/world/lease/mutant_protocol.hpp"
#include "sim/world/lease/network.hpp"
#include "sim/world/lease/portal.hpp"
#include "sim/world/lease/redis_node.hpp"
#include "sim/world/lease/server_side.hpp"
#include "sim/world/lease/work_items.hpp"
#include "sim/world/run_guard.hpp"

namespace admit::world {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace lease;

// One run of the gate: a protocol, a built-in variant's (gate/redis/protocols, `builtin`; with a
// mutant that breaks its acquire, mutant_protocol.hpp) or the scenario's own.
struct lease_run {
  const scenario::protocol_ref* proto = nullptr;
  bool builtin = false;
  std::string name;  // the run's name in the report: the variant's, or the protocol's

  lease_run(const scenario::protocol_ref& p, bool is_builtin, std::string run_name)
      : proto(&p), builtin(is_builtin), name(std::move(run_name)) {
    ADMIT_ASSERT(proto->proto != nullptr, "a run's protocol is read");
  }
};

// How often a holder renews, or nullopt when the run does not renew.
std::optional<vtime_ns> renew_interval(const scenario::gate_spec& gate, const lease_run& run) {
  const redis::protocol& p = *run.proto->proto;
  if (!p.renew) return std::nullopt;
  if (p.client.renew_every_ns || p.client.renew_every_lease_fraction) return redis::renew_every_ns(p, gate.lease.lease_ns);
  return gate.lease.renew_every_ns;  // the gate's (lease / 3 by default)
}

gate::lease_client_config client_config(const scenario::gate_spec& gate, const lease_run& run,
                                        const lease_run_options& opts) {
  const scenario::lease_params& lp = gate.lease;
  gate::lease_client_config cfg;
  cfg.key = lp.key;
  cfg.limit = lp.limit;
  cfg.lease_ms = lp.lease_ns / sim::ms;
  cfg.acquire_timeout_ns = lp.acquire_timeout_ns;
  cfg.queue_timeout_ms = lp.queue_timeout_ns ? *lp.queue_timeout_ns / sim::ms : 2 * cfg.lease_ms;
  cfg.backoff.exponential = lp.backoff.k == scenario::backoff_spec::kind::exponential;
  cfg.backoff.delay_ns = lp.backoff.delay_ns;
  cfg.backoff.base_ns = lp.backoff.base_ns;
  cfg.backoff.max_ns = lp.backoff.max_ns;
  cfg.backoff.full_jitter = lp.backoff.jit == scenario::backoff_spec::jitter::full;
  if (const std::optional<vtime_ns> every = renew_interval(gate, run)) cfg.renew_every_ns = *every;
  cfg.on_give_up = run.proto->proto->client.on_give_up;
  if (opts.mutant_give_up_stays_in_line) cfg.on_give_up = redis::give_up_action::stop;
  {
    // The protocol's client policy; where it is silent, the gate's.
    const redis::client_policy& c = run.proto->proto->client;
    cfg.proto = run.proto->proto;
    if (c.acquire_timeout_ns) cfg.acquire_timeout_ns = *c.acquire_timeout_ns;
    cfg.renew_at_fixed_rate = c.renewal_timing == redis::renew_timing::fixed_rate;
    cfg.deadline_on_wall_clock = c.deadline == redis::deadline_clock::wall;
    cfg.quorum = c.quorum != redis::quorum_rule::single;
    cfg.quorum_all = c.quorum == redis::quorum_rule::all;
    cfg.quorum_off_by_one = gate.world_mut == scenario::world_mutation::quorum_off_by_one;
    if (c.retry) {
      cfg.backoff.exponential = c.retry->exponential;
      cfg.backoff.delay_ns = c.retry->delay_ns;
      cfg.backoff.base_ns = c.retry->base_ns;
      cfg.backoff.max_ns = c.retry->max_ns;
      cfg.backoff.full_jitter = c.retry->full_jitter;
    }
  }
  return cfg;
}

std::string describe(const script_failure& f) {
  std::string s = "the protocol's " + f.operation + (f.script.empty() ? " command" : " script \"" + f.script + "\"");
  if (!f.origin.empty() && f.origin != "inline") s += " (" + f.origin + ")";
  s += f.step_limit     ? " ran past the step limit"
       : f.memory_limit ? " ran past the memory limit"
                        : " failed";
  if (f.line > 0) s += " at line " + std::to_string(f.line);
  s += " for token " + f.token + " (worker " + std::to_string(f.worker) + ") at " + scenario::format_duration(f.at_ns) + ": " + f.message;
  return s;
}

run_record empty_record(std::uint64_t seed, const lease_run& run) {
  run_record rec;
  rec.seed = seed;
  rec.variant = run.name;
  rec.lease.emplace();
  return rec;
}

redis::call_values holders_values(const scenario::gate_spec& gate) {
  redis::call_values v;
  v.key = gate.lease.key;
  v.limit = gate.lease.limit;
  v.lease_ms = gate.lease.lease_ns / sim::ms;
  return v;
}

std::string holders_key(const scenario::gate_spec& gate, const lease_run& run) {
  return redis::expand(run.proto->proto->holders.key, holders_values(gate));
}

// The protocol's counter of free permits (holders.free), expanded, if it names one.
std::optional<std::string> free_key(const scenario::gate_spec& gate, const lease_run& run) {
  if (!run.proto->proto->holders.free) return std::nullopt;
  return redis::expand(*run.proto->proto->holders.free, holders_values(gate));
}

// The orchestrator: arrivals (from the pump) fill the item queue, each worker's loop takes
// items and processes them (acquire, portal call, release); the parts do the
// rest (sim/world/lease/).
class lease_world {
 public:
  lease_world(const scenario::scenario& sc, std::uint64_t seed, const lease_run& run, const lease_run_options& opts)
      : sc_(sc), guard_(sc.checks.max_events, sc.checks.max_wall_ns), rec_(empty_record(seed, run)),
        facts_(sched_, static_cast<std::size_t>(sc.fleet.workers)),
        monitors_(sched_, sc, opts.trace ? static_cast<std::size_t>(sc.checks.trace_capacity) : 0, rec_.metrics,
                  *rec_.lease),
        items_(facts_, sc.service.service_time, seed),
        node_(sc.faults.schedule), server_(sched_, node_, fleet_, facts_, gate().world_mut),
        net_(sched_, node_, server_, facts_, static_cast<std::size_t>(sc.fleet.workers),
             gate().world_mut == scenario::world_mutation::check_then_add),
        fleet_(sched_, net_, client_config(gate(), run, opts), sc, seed),
        portal_(sched_, facts_, sc.service.portal_cap.value_or(gate().lease.limit),
                sc.service.client_timeout_ns.value_or(default_portal_read_timeout_ns),
                sc.service.over_cap == scenario::service_spec::over_cap_policy::serve,
                sc.service.on_client_close == scenario::service_spec::client_close_policy::free_slot,
                static_cast<std::size_t>(sc.fleet.workers)),
        faults_(sched_, fleet_, items_, node_, server_, net_, portal_, facts_), src_(sc, seed),
        pump_(sched_, src_, *this), requeue_and_exit_(sc.fleet.on_acquire_timeout ==
                                                        scenario::acquire_timeout_policy::requeue_and_exit),
        mutant_requeue_drops_item_(opts.mutant_requeue_drops_item) {
    rec_.lease->requeue_and_exit = requeue_and_exit_;
    // The causes hear every fact first (what they keep is whole when an invariant asks them), then the
    // invariants the scenario checks and the monitors; the timeline, when the run records one, after them.
    const std::optional<vtime_ns> renew_every = renew_interval(gate(), run);
    // A built-in variant's scripts are the project's own: a cause names the acquire, not "the protocol's".
    causes_.emplace(sched_, sc_, !run.builtin, renew_every, node_, server_);
    facts_.subscribe(*causes_);  // before the first fact: the run has not started
    monitors_.set_causes(&*causes_);
    invariants_.emplace(monitors_, facts_);
    if (opts.timeline) {
      rec_.series.keep_lanes_in(opts.lanes_around);
      facts_.subscribe(timeline_.emplace(sched_, rec_.series));
    }
    client_behaviour b;
    b.renew_every_ns = renew_every;
    {
      b.on_renewal_lost = run.proto->proto->client.on_renewal_lost;
      b.restart_after_ns = run.proto->proto->client.restart_after_ns;
      b.on_client_timeout = run.proto->proto->client.on_client_timeout;
      redis::script_limits limits;
      limits.max_steps = opts.script_steps_max;
      node_.set_script_limits(limits);
      node_.set_native_twins(opts.native_twins);
      node_.set_pubsub(&net_.pubsub());
      net_.set_wait_acks_at_once(opts.wait_acks_at_once);
      server_.use_protocol(*run.proto->proto, holders_key(gate(), run), gate().lease.lease_ns / sim::ms,
                           free_key(gate(), run));
      server_.use_gate_values(gate().lease.key, gate().lease.limit, client_config(gate(), run, opts).queue_timeout_ms);
    }
    fleet_.set_behaviour(b);
    if (const std::optional<scenario::process_spec>& p = gate().process) {
      // The fleet's client is the child's code (process_client.hpp); the server judges it by its holders.
      server_.use_process_client();
      rec_.gate_core = process::session::name_of(*p);
      fleet_.use_processes(*p, seed, client_config(gate(), run, opts), sc_.faults.schedule);
    }
    if (opts.trace_to != nullptr) monitors_.stream_trace(*opts.trace_to);
    add_nodes(run, opts);
    for (const auto& e : extra_) causes_->add_node(e->node);
    // What the faults met, last: it judges nothing and records nothing the others read.
    coverage_.emplace(sc_, sched_, node_, server_);
    facts_.subscribe(*coverage_);
  }

  ~lease_world() { tear_down(); }

  run_record run() {
    // The protocol's set-up, before anything else runs: a set-up that fails stops the run before it starts.
    if (!server_.run_setup(false)) {
      rec_.status = sim::run_status::stopped;
      finish();
      tear_down();
      monitors_.write(rec_);
      coverage_->write(rec_, portal_.cap());
      return std::move(rec_);
    }
    pump_.start();
    if (src_.total() == 0) items_.close_arrivals();
    faults_.schedule(sc_.faults.schedule);
    fleet_.start([this](std::size_t wi, std::uint64_t gen) { return worker_loop(wi, gen); },
                 [this](std::size_t wi, std::uint64_t gen, bool woken) { return park(wi, gen, woken); });
    // checks.liveness_horizon stops the run there first: once every event due by then has run, the
    // system must be idle (when nothing is left to run, finish() judges the same end state). The
    // check adds no event and does not move the clock.
    const std::optional<vtime_ns> lh = sc_.checks.liveness_horizon_ns;
    rec_.status = guard_.run(sched_, lh.value_or(sc_.checks.horizon_ns));
    if (lh && rec_.status == sim::run_status::time_limit && !guard_.wall_hit()) {
      // Events remain after it, so moving the clock to it changes no later time.
      if (sched_.now_ns() < *lh) sched_.run_until(*lh, 0);
      std::int64_t at_work = 0;
      for (std::size_t wi = 0; wi < fleet_.size(); ++wi) at_work += fleet_[wi].current.has_value();
      facts_.publish(lease::fact::horizon_reached{*lh, items_.unended(), fleet_.holders(), at_work});
      if (monitors_.stopped()) rec_.status = sim::run_status::stopped;
      else rec_.status = guard_.run(sched_, sc_.checks.horizon_ns);
    }
    finish();
    tear_down();
    monitors_.write(rec_);
    coverage_->write(rec_, portal_.cap());
    return std::move(rec_);
  }

  // From the pump, at the arrival's time (it has scheduled the next one first).
  void on_arrival(const arrival& a) {
    items_.arrive(a, sched_.now_ns(), portal_.read_timeout_for(a.client_timeout_ns));
    if (!pump_.pending()) items_.close_arrivals();
    fleet_.wake_one();
    if (items_.arrivals_done()) fleet_.wake_all_idle();
  }

 private:
  const scenario::gate_spec& gate() const { return sc_.gates.front(); }

  // A quorum run's nodes 1 .. N-1, each its own redis_node, server side and
  // network (links, cuts), built like node 0; every worker's transport reaches
  // all of them. A one-node run builds nothing here.
  struct extra_node {
    redis_node node;
    server_side server;
    network net;
    extra_node(lease_world& w, const scenario::scenario& sc)
        : node(sc.faults.schedule),
          server(w.sched_, node, w.fleet_, w.facts_, w.gate().world_mut),
          net(w.sched_, node, server, w.facts_, static_cast<std::size_t>(sc.fleet.workers),
              w.gate().world_mut == scenario::world_mutation::check_then_add) {}
  };

  void add_nodes(const lease_run& run, const lease_run_options& opts) {
    const auto n = static_cast<std::size_t>(gate().lease.redis_nodes);
    if (n <= 1) return;
    ADMIT_ASSERT(!run.builtin, "several Redis nodes run only a scenario's protocols (the loader refuses variants)");
    node_members_.assign(n, 0);
    nets_.push_back(&net_);
    server_.set_quorum(0, &node_members_);
    for (std::size_t i = 1; i < n; ++i) {
      auto& e = *extra_.emplace_back(std::make_unique<extra_node>(*this, sc_));
      redis::script_limits limits;
      limits.max_steps = opts.script_steps_max;
      e.node.set_script_limits(limits);
      e.node.set_native_twins(opts.native_twins);
      e.node.set_pubsub(&e.net.pubsub());
      e.node.set_index(i);
      e.server.use_protocol(*run.proto->proto, holders_key(gate(), run), gate().lease.lease_ns / sim::ms,
                            free_key(gate(), run));
      e.server.set_quorum(i, &node_members_);
      nets_.push_back(&e.net);
      faults_.add_node(e.node, e.server, e.net);
    }
    fleet_.set_nodes(nets_.data(), n, run.proto->proto->client.quorum == redis::quorum_rule::all);
  }

  // The first node's inconsistent reply (a quorum run asks every node; the run stopped at the first).
  const std::optional<std::string>& first_inconsistency() const {
    if (server_.inconsistency()) return server_.inconsistency();
    for (const auto& e : extra_)
      if (e->server.inconsistency()) return e->server.inconsistency();
    return server_.inconsistency();
  }

  void tear_down() {
    monitors_.tear_down();
    fleet_.tear_down();
    net_.drop_unbounded_calls();
    for (const auto& e : extra_) e->net.drop_unbounded_calls();
    sched_.shutdown();
  }

  // --- workers --------------------------------------------------------------

  // What a worker's loop does at its checkpoint: the one rule both the loop
  // and park() follow.
  enum class next_step {
    end,    // its protocol takes no new work after a lost renewal
    drain,  // the queue is empty and the last arrival has come
    wait,   // the queue is empty, arrivals are still to come
    work,   // it takes the next item
  };
  next_step next_for(const worker_state& w) const {
    if (w.renewal.retired) return next_step::end;
    if (!items_.empty()) return next_step::work;
    // The seed's run_fleet worker returns on an empty queue; ours waits while arrivals are still to
    // come (they come over time here, not all queued up front) and returns once the last has come.
    return items_.arrivals_done() ? next_step::drain : next_step::wait;
  }

  // The loop's first step (below), answered without running the loop where
  // it would only wait: an idle worker whose loop never began holds no
  // coroutine. After a wake it is the loop's step after its idle wait: park
  // again, drain, or end a retired loop; the loop's very first step ends or
  // drains by running (its event count is the loop's).
  bool park(std::size_t wi, std::uint64_t gen, bool woken) {
    switch (next_for(fleet_[wi])) {
      case next_step::work: return false;
      case next_step::end: return woken;
      case next_step::drain:
        if (woken) drained(wi);
        return woken;
      case next_step::wait: fleet_.park_unstarted(wi, gen); return true;
    }
    return false;
  }

  sim::awaitable<void> worker_loop(std::size_t wi, std::uint64_t gen) {
    worker_state& w = fleet_[wi];
    w.started = true;
    for (;;) {
      ADMIT_CHECKPOINT(fleet_, wi, gen);
      const next_step next = next_for(w);
      if (next == next_step::end) co_return;
      if (next == next_step::drain) {
        drained(wi);
        co_return;
      }
      if (next == next_step::wait) {
        fleet_.set_idle(wi, true);
        (void)co_await fleet_.async_idle_wait(wi, asio::as_tuple(sim::use_awaitable));
        fleet_.set_idle(wi, false);
        continue;
      }
      const work_item item = items_.pop();
      const std::string token = fleet::token_of(wi, item.number);
      fleet_.take(wi, item, token);
      co_await process(wi, gen, item, token);
      facts_.publish(lease::fact::left_item{wi, item.number});
      w.current.reset();
      if (w.exited) co_return;  // requeue_and_exit: its acquire gave up, its item is back in the queue
    }
  }

  void drained(std::size_t wi) {
    fleet_[wi].drained = true;
    facts_.publish(lease::fact::worker_drained{wi});
  }

  static const char* outcome_of(int status) {
    return status == 200 ? "completed" : status == 429 ? "rate_limited" : status == 0 ? "client_timeout" : "aborted";
  }

  sim::awaitable<void> process(std::size_t wi, std::uint64_t gen, work_item item, const std::string& token) {
    worker_state& w = fleet_[wi];
    facts_.publish(lease::fact::acquiring{wi, token, fleet_.holders(), item.number, item.service_ns});
    gate::acquire_outcome got = co_await w.link.client->acquire(token);
    ADMIT_CHECKPOINT(fleet_, wi, gen);
    // The rare branches marked so, that GCC moves them out of the hot path of the coroutine's body.
    if (got.ec == gate::gate_errc::unreachable && gate().world_mut == scenario::world_mutation::fail_open) [[unlikely]] {
      // Broken on purpose: no confirmed permit, and the request goes out anyway.
      facts_.publish(lease::fact::sent_without_permit{wi, token, fleet_.holders()});
      const int st = co_await portal_.call(wi, item, false);
      ADMIT_CHECKPOINT(fleet_, wi, gen);
      items_.end(item, outcome_of(st), sched_.now_ns());
      co_return;
    }
    if (got.ec && requeue_and_exit_) [[unlikely]] {
      // run_fleet: the item goes back to the tail of the queue and this worker's loop ends. An unreachable
      // Redis is an acquire failure too (the seed's failure mode 2), so it is treated alike.
      facts_.publish(lease::fact::gave_up{wi, token, got.ec.message(), fleet_.holders(),
                                          got.ec == gate::gate_errc::unreachable, true});
      if (!mutant_requeue_drops_item_) items_.requeue(item);
      w.exited = true;
      fleet_.wake_one();  // a worker idle on an empty queue takes it
      co_return;
    }
    if (got.ec) [[unlikely]] {
      const bool unreachable = got.ec == gate::gate_errc::unreachable;
      facts_.publish(lease::fact::gave_up{wi, token, got.ec.message(), fleet_.holders(), unreachable, false});
      items_.end(item, unreachable ? "deferred_unreachable" : "deferred", sched_.now_ns());
      co_return;
    }
    ADMIT_ASSERT(got.attempts >= 1, "a grant comes of an attempt");
    // The token of the grant: the item's, or a fresh one of it after a lost attempt (on_lost_acquire "new_token").
    const std::string& granted_token = got.token;
    ADMIT_ASSERT(lease::fleet::of_item(w, granted_token), "an acquire is granted under its item's token or a fresh one of it");
    const std::int64_t holders = fleet_.hold(wi, granted_token);
    ADMIT_ASSERT(w.holding && *w.holding == granted_token && holders <= static_cast<std::int64_t>(fleet_.size()),
                 "the worker holds its token, and no more permits are held than there are workers");
    facts_.publish(lease::fact::granted{wi, item.number, granted_token, sched_.now_ns() - item.arrived_ns, got.attempts, holders});
    std::shared_ptr<bool> renewing;
    if (fleet_.behaviour().renew_every_ns) {
      renewing = std::make_shared<bool>(true);
      w.renewal.holding = renewing;
      // The renewer stops by itself at its next tick once the work is over or
      // the worker crashed (a signal has one slot, owned by the worker loop).
      asio::co_spawn(sched_.get_executor(), renew_loop(wi, granted_token, renewing), [](std::exception_ptr) {});
    }
    const vtime_ns started = sched_.now_ns();
    const client_behaviour& policy = fleet_.behaviour();
    const bool may_abort = policy.renew_every_ns && policy.on_renewal_lost == redis::renewal_loss::abort_request;
    const int status = co_await portal_.call(wi, item, true, may_abort ? &w.renewal.portal_wait : nullptr);
    ADMIT_CHECKPOINT(fleet_, wi, gen);
    if (status == 0 && policy.on_client_timeout == redis::timeout_permit::hold_to_end && !portal_.frees_slot_on_close()) {
      // The client gave up waiting, but its protocol holds the permit until the connection really ends
      // (under free_slot the portal ended it as the client closed it).
      co_await sim::sleep_for(item.service_ns - item.read_timeout_ns);
      ADMIT_CHECKPOINT(fleet_, wi, gen);
    }
    facts_.publish(lease::fact::served{wi, sched_.now_ns() - started});
    if (renewing) {
      *renewing = false;
      w.renewal.holding.reset();
    }
    // The "finally": release whatever happened at the portal.
    const error_code rel = co_await w.link.client->release(granted_token);
    ADMIT_CHECKPOINT(fleet_, wi, gen);
    if (rel) [[unlikely]] {
      facts_.publish(lease::fact::release_failed{wi, item.number});
    }
    fleet_.drop_holding(wi);
    ADMIT_ASSERT(!w.holding.has_value() && !w.renewal.holding, "after its release a worker holds no permit and renews none");
    portal_.detach(wi);  // a connection it leaves open runs on without it
    items_.end(item, outcome_of(status), sched_.now_ns());
  }

  // The holder's renewer: the client's own timer (gate::lease_client::keep_renewed); the world only holds it
  // through a pause (a paused process renews nothing while paused, and its overdue timer fires as the pause
  // ends, as a real timer does after a GC pause or SIGSTOP) and acts on a loss by the protocol's policy.
  sim::awaitable<void> wait_out_pause(std::size_t wi, std::shared_ptr<bool> holding) {
    const worker_state& w = fleet_[wi];
    while (*holding && sched_.now_ns() < w.paused_until) co_await sim::sleep_for(w.paused_until - sched_.now_ns());
  }

  sim::awaitable<void> renew_loop(std::size_t wi, std::string token, std::shared_ptr<bool> holding) {
    worker_state& w = fleet_[wi];
    // A plain lambda that returns the coroutine (a coroutine lambda's captures would live in a temporary).
    std::function<sim::awaitable<void>()> ready = [this, wi, holding] { return wait_out_pause(wi, holding); };
    const bool kept = co_await w.link.client->keep_renewed(token, holding, std::move(ready));
    if (kept || !*holding) co_return;
    w.lost = true;
    // What the protocol does about it (keep_working: nothing).
    const redis::renewal_loss loss = fleet_.behaviour().on_renewal_lost;
    facts_.publish(lease::fact::renewal_lost{wi, token, fleet_.holders(), loss == redis::renewal_loss::stop_new_work});
    if (loss == redis::renewal_loss::stop_new_work) w.renewal.retired = true;
    if (loss == redis::renewal_loss::abort_request && w.renewal.portal_wait != nullptr)
      w.renewal.portal_wait->cancel();
    // The unhandled lost-lock error: the process dies with its work, and its supervisor restarts it.
    if (loss == redis::renewal_loss::crash_process && w.alive) faults_.crash_process(wi, fleet_.behaviour().restart_after_ns);
  }


  // --- the end --------------------------------------------------------------

  void finish() {
    ADMIT_ASSERT(items_.ended() <= items_.arrived() && items_.arrived() <= src_.total(),
                 "items end after they arrive, and arrive from the source");
    rec_.metrics.simulated_ns = sched_.now_ns();
    rec_.diagnostics = {.events = sched_.events_run(), .sequence_numbers = sched_.next_sequence(),
                        .process = fleet_.children_exchanges()};
    fleet_.audit();
    if (requeue_and_exit_) rec_.lease->items_left = items_.queued().size();
    // A run cut short is inconclusive: what it did not reach is not judged.
    const std::uint64_t total = src_.total();
    const std::uint64_t pending = total - items_.ended();
    if (const process::session_failure* f = fleet_.process_failure()) {
      // A worker's child could not go on: the run stopped there, and nothing after it is judged.
      rec_.inconclusive = inconclusive_reason{f->kind, f->detail};
      return;
    }
    if (const std::optional<script_failure>& f = server_.failure()) {
      // The user's script failed: the run stopped there, and nothing after it is judged.
      rec_.inconclusive = inconclusive_reason{"script_error", describe(*f), *f};
      return;
    }
    if (const std::optional<std::string>& why = first_inconsistency()) {
      rec_.inconclusive = inconclusive_reason{"protocol_inconsistent", *why};
      return;
    }
    if (const std::optional<std::string>& why = server_.setup_failure()) {
      rec_.inconclusive = inconclusive_reason{"setup_failed", *why};
      return;
    }
    if (!monitors_.stopped())
      rec_.inconclusive = guard_.reason(rec_.status, sched_.now_ns(), sc_.checks.horizon_ns, pending, total);
    if (!monitors_.stopped() && !rec_.inconclusive) {
      // What is left at the end, for liveness to judge: the items, and the permits still live one lease
      // later by the server's clock (on every node; a permit past its lease that no acquire has reaped
      // yet is free capacity: the next acquire reaps it, and expired_leases_reaped checks that it does).
      std::int64_t left = 0;
      std::string where;
      if (items_.unended() == 0 && !pump_.pending()) {
        const std::int64_t later_us = node_.server_now_us(sched_.now_ns()) + (gate().lease.lease_ns + sim::ms) / 1000;
        if (const redis::sorted_set* set = node_.peek_set(server_.holders_key(), later_us))
          left = live_at(*set, later_us);
        for (std::size_t i = 0; i < extra_.size(); ++i) {
          const redis_node& n = extra_[i]->node;
          const std::int64_t later = n.server_now_us(sched_.now_ns()) + (gate().lease.lease_ns + sim::ms) / 1000;
          if (const redis::sorted_set* set = n.peek_set(server_.holders_key(), later))
            if (const std::int64_t live = live_at(*set, later); live != 0) {
              left += live;
              where += (where.empty() ? " (on node " : ", node ") + std::to_string(i + 1);
            }
        }
        if (!where.empty()) where += ")";
      }
      facts_.publish(lease::fact::run_ended{src_.total(), items_.unended(), pump_.pending(), left, where});
    }
  }

  // The members of a holders set still live at server time `at_us`, by what their scores mean.
  std::int64_t live_at(const redis::sorted_set& set, std::int64_t at_us) const {
    std::int64_t live = 0;
    for (const redis::sorted_set::entry& e : set.entries()) live += server_.live_score(e.score, at_us / 1000);
    ADMIT_ASSERT(live <= static_cast<std::int64_t>(set.size()), "live members are members");
    return live;
  }

  const scenario::scenario& sc_;
  sim::scheduler sched_;
  run_guard guard_;
  run_record rec_;
  fact_bus facts_;  // every part publishes here; the monitors and the timeline subscribe
  lease_monitors monitors_;
  std::optional<lease_invariants> invariants_;  // each a subscriber, built from its row
  std::optional<lease_timeline> timeline_;  // only when the run records a timeline
  work_items items_;
  redis_node node_;
  server_side server_;  // runs what reaches node_ (it reports to fleet_, built after it)
  network net_;
  fleet fleet_;
  portal portal_;
  fault_injector faults_;
  // A quorum run's further nodes, their networks in node order (node 0's first)
  // and every node's member count (empty in a one-node run).
  std::vector<std::unique_ptr<extra_node>> extra_;
  std::vector<network*> nets_;
  std::vector<std::int64_t> node_members_;
  std::optional<lease_coverage> coverage_;  // which faults met which states (run_record::coverage)
  std::optional<lease_causes> causes_;  // built first: it keeps what the facts tell, and reads the nodes' data
  arrival_source src_;
  arrival_pump<lease_world> pump_;  // the arrivals, one ahead, to on_arrival
  const bool requeue_and_exit_;     // fleet.on_acquire_timeout: the run_fleet worker model
  const bool mutant_requeue_drops_item_;
};

}  // namespace

run_record run_lease_scenario(const scenario::scenario& sc, std::uint64_t seed, redis::variant variant,
                              const lease_run_options& options) {
  const scenario::world_mutation mut = sc.gates.front().world_mut;
  const std::string name = std::string(redis::to_string(variant));
  if (lease::breaks_acquire(mut)) {
    const scenario::protocol_ref broken = lease::mutant_protocol(variant, mut);
    lease_world w(sc, seed, lease_run(broken, true, name), options);
    return w.run();
  }
  lease_world w(sc, seed, lease_run(scenario::builtin_protocol(variant), true, name), options);
  return w.run();
}

run_record run_lease_protocol(const scenario::scenario& sc, std::uint64_t seed, const scenario::protocol_ref& proto,
                              const lease_run_options& options) {
  lease_world w(sc, seed, lease_run(proto, false, proto.proto->name), options);
  return w.run();
}

std::optional<gate::lease_client_config> lease_client_config_of(const scenario::scenario& sc, const std::string& run_name) {
  ADMIT_ASSERT(!sc.gates.empty(), "a scenario has a gate");
  const scenario::gate_spec& g = sc.gates.front();
  if (g.kind != scenario::gate_kind::lease) return std::nullopt;
  for (const redis::variant v : g.lease.variants)
    if (redis::to_string(v) == run_name)
      return client_config(g, lease_run(scenario::builtin_protocol(v), true, run_name), lease_run_options{});
  for (const scenario::protocol_ref& p : g.lease.protocols)
    if (p.proto->name == run_name) return client_config(g, lease_run(p, false, run_name), lease_run_options{});
  return std::nullopt;
}

}  // namespace admit::world
