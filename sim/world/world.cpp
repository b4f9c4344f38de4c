#include "sim/world/world.hpp"

#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "gate/asio/async_fifo_gate.hpp"
#include "gate/asio/finish_worker.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/sim_env.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/fault_draw.hpp"
#include "sim/world/fifo_process.hpp"
#include "sim/world/lease_world.hpp"
#include "sim/world/run_guard.hpp"

namespace admit::world {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using sim_gate = gate::async_fifo_gate<process_env>;

enum probe : std::size_t {
  p_queued,
  p_queue_full,
  p_wait_timeout,
  p_promoted,
  p_promotion_beat_deadline,
  p_promotion_beat_cancel,
  p_cancelled_waiting,
  p_cancelled_working,
  p_client_gave_up_first,
  p_worker_failed_starting,
  p_event_log_wrapped,
  p_count,
};
constexpr const char* probe_names[p_count] = {
    "queued",
    "queue_full",
    "wait_timeout",
    "promoted",
    "promotion beat the deadline",
    "promotion beat a cancellation",
    "cancelled while waiting",
    "cancelled while working (lease held to the end)",
    "client gave up before the answer",
    "worker failed while starting",
    "event log wrapped around",
};

enum inv : std::size_t {
  inv_gate_inflight,
  inv_waiting,
  inv_portal_inflight,
  inv_fifo_order,
  inv_released_once,
  inv_liveness,
  inv_count,
};
// The FIFO world reports the table's first inv_count rows, in table order: each must be one it checks.
static_assert([] {
  for (std::size_t i = 0; i < inv_count; ++i)
    if (!check::applies(check::invariant_table[i].name, check::world_fifo)) return false;
  for (std::size_t i = inv_count; i < check::invariant_count; ++i)
    if (check::applies(check::invariant_table[i].name, check::world_fifo)) return false;
  return true;
}());

class world;

// One gate of the scenario with its monitor state.
struct gate_slot final : fifo::event_sink, gate::fifo_observer {
  gate_slot(world& w, std::size_t index, const scenario::gate_spec& spec, process_executor ex)
      : owner(w), idx(index), name(spec.name), cfg(spec.fifo), gate_ptr(std::make_unique<sim_gate>(ex, spec.fifo)) {
    attach();
  }
  void on_event(const fifo::event& e) override;
  void on_gate_change(const fifo::fifo_gate& core) override;

  sim_gate& gate() noexcept { return *gate_ptr; }
  const sim_gate& gate() const noexcept { return *gate_ptr; }
  void attach() {
    gate_ptr->set_event_sink(this);
    gate_ptr->set_observer(this);
  }
  // The process crashed: the gate it held is gone. What of it still drains
  // (leases of work still running at the portal, posted claims) reaches a
  // gate nobody monitors; the new lifetime starts with an empty gate and
  // fresh monitor state, so gate invariants apply per process lifetime.
  std::unique_ptr<sim_gate> rebuild(process_executor ex) {
    gate_ptr->set_event_sink(nullptr);
    gate_ptr->set_observer(nullptr);
    std::unique_ptr<sim_gate> dead = std::exchange(gate_ptr, std::make_unique<sim_gate>(ex, cfg));
    attach();
    granted = 0;
    released = 0;
    queue_order.clear();
    return dead;
  }

  world& owner;
  std::size_t idx;
  std::string name;
  fifo::config cfg;
  std::unique_ptr<sim_gate> gate_ptr;
  std::uint64_t granted = 0;
  std::uint64_t released = 0;
  // Tickets in the order they queued (which is increasing ticket order), each
  // marked once it left the queue by timeout or cancellation; the front is
  // dropped while marked.
  struct queued_ticket {
    fifo::ticket_id ticket;
    bool left;
  };
  std::deque<queued_ticket> queue_order;

  // The entry of a ticket still queued, or nullptr.
  queued_ticket* still_queued(fifo::ticket_id t) {
    auto it = std::lower_bound(queue_order.begin(), queue_order.end(), t,
                               [](const queued_ticket& q, fifo::ticket_id v) { return q.ticket < v; });
    return it != queue_order.end() && it->ticket == t && !it->left ? &*it : nullptr;
  }
  void drop_left_front() {
    while (!queue_order.empty() && queue_order.front().left) queue_order.pop_front();
  }
};

// One request in flight. Owned through req_ptr: a plain (non-atomic) count,
// since a run is single-threaded by design, and storage recycled by the world.
struct request_state {
  arrival a;
  std::uint64_t number = 0;
  gate_slot* gate = nullptr;
  vtime_ns service_ns = 0;
  vtime_ns granted_ns = 0;
  request_outcome out;
  // The cancellation handler of the operation in progress, if any, in place
  // (request_slot): the request's own cancellation signal.
  static constexpr std::size_t cancel_bytes = 32;
  alignas(std::max_align_t) unsigned char cancel_buf[cancel_bytes];
  void (*cancel_call)(void*, asio::cancellation_type_t) = nullptr;
  void (*cancel_destroy)(void*) noexcept = nullptr;
  sim_gate::lease lease;          // held from the grant until the work has really ended
  bool started = false;           // its handler has run its first step
  bool cancel_requested = false;  // it was cancelled (whether or not the handler had started)
  bool keep = false;              // a case refers to it: keep its outcome
  bool accepted = false;          // the server process took its connection
  std::uint64_t gen = 0;          // the process lifetime that took it
  std::uint32_t refs = 0;
  world* owner = nullptr;
  // Room for the one operation of the handler in progress (the gate's waiter,
  // then finish_worker's state): see request_allocator.
  static constexpr std::size_t arena_bytes = 128;
  alignas(std::max_align_t) unsigned char arena[arena_bytes];
  bool arena_used = false;

  void clear_cancel_handler() noexcept {
    if (cancel_destroy != nullptr) {
      auto destroy = std::exchange(cancel_destroy, nullptr);
      cancel_call = nullptr;
      destroy(cancel_buf);
    }
  }
  // As cancellation_signal::emit: calls the handler, if any (which may clear
  // itself from inside the call).
  void emit_cancel(asio::cancellation_type_t type) {
    if (cancel_call != nullptr) cancel_call(cancel_buf, type);
  }

  // Back to the state of a new request, keeping its strings' storage for the
  // next one. Ends a lease still held (only at teardown); the arena is freed
  // by the allocator, not here.
  void clear() noexcept {
    { sim_gate::lease gone = std::move(lease); }  // its destructor keeps a failed release in the gate
    clear_cancel_handler();
    a = arrival{};
    number = 0;
    gate = nullptr;
    service_ns = 0;
    granted_ns = 0;
    out.id.clear();
    out.arrived_ns = 0;
    out.responded = false;
    out.http_status = 0;
    out.status.clear();
    out.responded_ns = -1;
    out.client_timed_out = false;
    started = false;
    cancel_requested = false;
    keep = false;
    accepted = false;
    gen = 0;
  }
};

// Out of line: the count's decrement is inlined everywhere, the reset is not.
[[gnu::noinline]] void recycle(request_state* r) noexcept;

// The handler's associated allocator: the operation it waits on is placed in
// its request's arena (one at a time; anything else goes to the heap). The
// arena lives as long as the world, and an operation holds its handler,
// hence its request.
template <class T>
struct request_allocator {
  using value_type = T;
  request_state* r;
  explicit request_allocator(request_state* s) noexcept : r(s) {}
  template <class U>
  request_allocator(const request_allocator<U>& o) noexcept : r(o.r) {}
  T* allocate(std::size_t n) {
    if (!r->arena_used && n * sizeof(T) <= request_state::arena_bytes && alignof(T) <= alignof(std::max_align_t)) {
      r->arena_used = true;
      return reinterpret_cast<T*>(r->arena);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept {
    if (static_cast<void*>(p) == static_cast<void*>(r->arena)) r->arena_used = false;
    else ::operator delete(p);
  }
  template <class U>
  friend bool operator==(const request_allocator& a, const request_allocator<U>& b) noexcept { return a.r == b.r; }
  template <class U>
  friend bool operator!=(const request_allocator& a, const request_allocator<U>& b) noexcept { return a.r != b.r; }
};

// A cancellation slot (Asio's CancellationSlot requirements) whose handler
// lives in its request: emplacing one never allocates, unlike
// asio::cancellation_slot, which frees its handler's memory on every clear().
class request_slot {
 public:
  explicit request_slot(request_state* r) noexcept : r_(r) {}

  template <class H, class... Args>
  H& emplace(Args&&... args) {
    static_assert(sizeof(H) <= request_state::cancel_bytes && alignof(H) <= alignof(std::max_align_t),
                  "a cancellation handler too big for request_state::cancel_buf");
    r_->clear_cancel_handler();
    H* h = ::new (static_cast<void*>(r_->cancel_buf)) H(std::forward<Args>(args)...);
    r_->cancel_call = [](void* p, asio::cancellation_type_t type) { (*static_cast<H*>(p))(type); };
    r_->cancel_destroy = [](void* p) noexcept { static_cast<H*>(p)->~H(); };
    return *h;
  }
  template <class H>
  std::decay_t<H>& assign(H&& h) {
    return emplace<std::decay_t<H>>(std::forward<H>(h));
  }
  void clear() noexcept { r_->clear_cancel_handler(); }
  bool is_connected() const noexcept { return r_ != nullptr; }
  bool has_handler() const noexcept { return r_ != nullptr && r_->cancel_call != nullptr; }

 private:
  request_state* r_;
};

class req_ptr {
 public:
  req_ptr() noexcept = default;
  explicit req_ptr(request_state* p) noexcept : p_(p) { ++p_->refs; }
  req_ptr(const req_ptr& o) noexcept : p_(o.p_) {
    if (p_ != nullptr) ++p_->refs;
  }
  req_ptr(req_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  req_ptr& operator=(req_ptr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~req_ptr() {
    if (p_ != nullptr && --p_->refs == 0) recycle(p_);
  }
  request_state* operator->() const noexcept { return p_; }
  request_state* get() const noexcept { return p_; }
  request_state& operator*() const noexcept { return *p_; }

 private:
  request_state* p_ = nullptr;
};

class world {
 public:
  world(const scenario::scenario& sc, std::uint64_t seed)
      : sc_(sc),
        proc_(sched_),
        guard_(sc.checks.max_events, sc.checks.max_wall_ns),
        service_rng_(sim::substream(seed, "service")),
        src_(sc, seed) {
    rec_.seed = seed;
    for (std::size_t i = 0; i < inv_count; ++i) {
      invariant_result r;
      r.name = scenario::invariant_names[i];
      r.enabled = sc.checks.invariants.empty() ||
                  std::find(sc.checks.invariants.begin(), sc.checks.invariants.end(), r.name) !=
                      sc.checks.invariants.end();
      rec_.invariants.push_back(r);
    }
    std::int64_t cap_total = 0;
    for (std::size_t i = 0; i < sc.gates.size(); ++i) {
      gates_.push_back(std::make_unique<gate_slot>(*this, i, sc.gates[i], process_ex()));
      cap_total += sc.gates[i].fifo.max_active;
    }
    portal_cap_ = sc.service.portal_cap.value_or(cap_total);
    trace_cap_ = static_cast<std::size_t>(sc.checks.trace_capacity);

    // Requests in arrival order (stable: equal times keep file order).
    collect_case_refs();
    keep_all_ = src_.total() <= 10'000;
    for (const char* n : probe_names) rec_.probes.emplace_back(n, 0);
  }

  ~world() {
    // Pending work refers to the gates: destroy it while they are alive.
    tearing_down_ = true;
    sched_.shutdown();
  }

  run_record run() {
    // Faults first: at one instant a fault strikes before the arrivals due then.
    for (const auto& f : sc_.faults.schedule) {
      const scenario::fault_spec* fp = &f;
      sched_.schedule_at(f.at_ns, [this, fp] { apply_fault(*fp); });
    }
    schedule_next_arrival();
    // Snapshot instants, in order; each sees every event due at or before it.
    std::set<vtime_ns> instants;
    for (const auto& s : snapshot_refs_) instants.insert(s.second);
    // checks.liveness_horizon stops the run there too: once every event due by then has run, the
    // system must be idle (when nothing is left to run, finish() judges the same end state). The
    // check adds no event and does not move the clock, so a report's events and times are the
    // ones the run had without it.
    const std::optional<vtime_ns> lh = sc_.checks.liveness_horizon_ns;
    if (lh) instants.insert(*lh);
    sim::run_status st = sim::run_status::idle;
    auto spend = [&](vtime_ns horizon) { st = guard_.run(sched_, horizon); };
    for (vtime_ns t : instants) {
      if (t > sc_.checks.horizon_ns) break;
      spend(t);
      if (st == sim::run_status::stopped || st == sim::run_status::event_limit) break;
      if (lh && t == *lh && st == sim::run_status::time_limit) {
        // Events remain after it, so moving the clock to it changes no later time.
        if (sched_.now_ns() < t) sched_.run_until(t, 0);
        check_idle(t);
        if (stopped_) {
          st = sim::run_status::stopped;
          break;
        }
      }
      if (std::none_of(snapshot_refs_.begin(), snapshot_refs_.end(), [&](const auto& r) { return r.second == t; }))
        continue;
      if (sched_.now_ns() < t) sched_.run_until(t, 0);
      for (const auto& [gate_name, at] : snapshot_refs_)
        if (at == t) capture(gate_name, t);
    }
    if (st != sim::run_status::stopped && st != sim::run_status::event_limit) spend(sc_.checks.horizon_ns);
    rec_.status = st;
    finish();
    // Tear down while the gates are alive; monitors ignore what teardown does
    // (leases of destroyed handlers returning to the gates).
    tearing_down_ = true;
    sched_.shutdown();
    return std::move(rec_);
  }

  // --- monitors -------------------------------------------------------------

  void on_gate_event(gate_slot& g, const fifo::event& e) {
    if (tearing_down_) return;
    push_trace(&g, fifo::to_string(e.st).data(), e.active, e.waiting, e.ticket);
    rec_.metrics.gate_inflight_max = std::max(rec_.metrics.gate_inflight_max, e.active);
    sample_series();
    rec_.metrics.waiting_max = std::max(rec_.metrics.waiting_max, e.waiting);
    const fifo::config& cfg = g.gate().core().cfg();
    switch (e.st) {
      case fifo::status::admitted:
      case fifo::status::promoted:
        ++g.granted;
        check(inv_gate_inflight, e.active <= cfg.max_active, [&] {
          return g.name + ": " + std::string(fifo::to_string(e.st)) + " ticket " + std::to_string(e.ticket) +
                 " made " + std::to_string(e.active) + " leases active, above max_active " +
                 std::to_string(cfg.max_active);
        });
        if (e.st == fifo::status::promoted) {
          hit(p_promoted);
          g.drop_left_front();
          const bool in_order = !g.queue_order.empty() && g.queue_order.front().ticket == e.ticket;
          check(inv_fifo_order, in_order, [&] {
            return g.name + ": promoted ticket " + std::to_string(e.ticket) + " while ticket " +
                   (g.queue_order.empty() ? std::string("(none)") : std::to_string(g.queue_order.front().ticket)) +
                   " had waited longer";
          });
          if (in_order) g.queue_order.pop_front();
          else if (gate_slot::queued_ticket* q = g.still_queued(e.ticket)) q->left = true;
        } else if (!g.queue_order.empty()) {
          // Admitted straight away while others wait: a newcomer overtook the queue.
          g.drop_left_front();
          check(inv_fifo_order, g.queue_order.empty(), [&] {
            return g.name + ": admitted newcomer ticket " + std::to_string(e.ticket) + " while ticket " +
                   std::to_string(g.queue_order.front().ticket) + " was waiting";
          });
        }
        break;
      case fifo::status::queued:
        hit(p_queued);
        g.queue_order.push_back(gate_slot::queued_ticket{e.ticket, false});
        check(inv_waiting, e.waiting <= cfg.max_waiting, [&] {
          return g.name + ": " + std::to_string(e.waiting) + " tickets waiting, above max_waiting " +
                 std::to_string(cfg.max_waiting);
        });
        break;
      case fifo::status::released:
        ++g.released;
        check(inv_released_once, g.released <= g.granted && e.active >= 0, [&] {
          return g.name + ": release number " + std::to_string(g.released) + " but only " +
                 std::to_string(g.granted) + " leases were granted (active " + std::to_string(e.active) + ")";
        });
        break;
      case fifo::status::wait_timeout:
      case fifo::status::wait_cancelled: {
        gate_slot::queued_ticket* q = g.still_queued(e.ticket);
        const bool was_waiting = q != nullptr;
        if (q != nullptr) q->left = true;
        if (e.st == fifo::status::wait_timeout) hit(was_waiting ? p_wait_timeout : p_promotion_beat_deadline);
        else hit(was_waiting ? p_cancelled_waiting : p_promotion_beat_cancel);
        break;
      }
      case fifo::status::queue_full:
        hit(p_queue_full);
        break;
    }
  }

  // After every call into a gate: a release the core refused as unbalanced
  // means some lease was counted out twice.
  void on_gate_change(gate_slot& g, const fifo::fifo_gate& core) {
    if (tearing_down_) return;
    check(inv_released_once, core.totals().unbalanced_release == 0 && core.active() >= 0, [&] {
      return g.name + ": a holder released its lease after the gate had already counted it out (" +
             std::to_string(core.totals().unbalanced_release) + " unbalanced release)";
    });
  }

  void portal_begin(request_state& r) {
    if (tearing_down_) return;
    ++portal_inflight_;
    rec_.metrics.portal_inflight_max = std::max(rec_.metrics.portal_inflight_max, portal_inflight_);
    push_trace(nullptr, "portal begin", portal_inflight_, 0, r.number);
    sample_series();
    if (lane* l = rec_.series.lane_for(r.number)) l->work_start_ns = sched_.now_ns();
    check(inv_portal_inflight, portal_inflight_ <= portal_cap_, [&] {
      return "portal: request " + r.a.id() + " made " + std::to_string(portal_inflight_) +
             " requests in flight, above the portal's cap " + std::to_string(portal_cap_);
    });
  }
  void portal_end(request_state& r) {
    if (tearing_down_) return;
    --portal_inflight_;
    push_trace(nullptr, "portal end", portal_inflight_, 0, r.number);
    sample_series();
    if (lane* l = rec_.series.lane_for(r.number)) l->work_end_ns = sched_.now_ns();
  }

 private:
  template <class Describe>
  void check(std::size_t which, bool ok, Describe&& describe) {
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

  // The live trace is a ring of small entries; text is made only for the
  // entries a report shows. `source` is a gate (nullptr: the request itself,
  // or the portal when `what` says so); `what` is a static string.
  struct live_entry {
    vtime_ns at_ns;
    const gate_slot* source;
    const char* what;
    std::int64_t active;
    std::int64_t waiting;
    std::uint64_t ref;
  };
  void push_trace(const gate_slot* source, const char* what, std::int64_t active, std::int64_t waiting,
                  std::uint64_t ref) {
    ++trace_total_;
    if (frozen_trace_ || trace_cap_ == 0) return;
    const live_entry e{sched_.now_ns(), source, what, active, waiting, ref};
    if (trace_.size() < trace_cap_) {
      trace_.push_back(e);
      return;
    }
    // Full: overwrite the oldest entry in place.
    trace_[trace_head_] = e;
    if (++trace_head_ == trace_.size()) trace_head_ = 0;
    ++rec_.trace_dropped;
  }

  // Totals over every gate, sampled into the run's timeline.
  void sample_series() {
    std::int64_t active = 0, waiting = 0;
    for (const auto& g : gates_) {
      active += g->gate().core().active();
      waiting += g->gate().core().waiting();
    }
    rec_.series.sample(sched_.now_ns(), active, portal_inflight_, waiting);
  }

  void hit(probe p) { ++rec_.probes[p].second; }

  // Trace texts of the faults (static strings: compared by address).
  static constexpr const char* fault_texts[] = {"crash worker:0", "restart worker:0", "stall worker:0",
                                                "partition portal", "client_timeout_burst"};
  static bool is_fault_text(const char* what) {
    return std::find(std::begin(fault_texts), std::end(fault_texts), what) != std::end(fault_texts);
  }

  void copy_trace() {
    rec_.trace.clear();
    for (std::size_t k = 0; k < trace_.size(); ++k) {
      const live_entry& e = trace_[(trace_head_ + k) % trace_.size()];
      rec_.trace.push_back(trace_entry{e.at_ns, e.source != nullptr ? e.source->name
                                                : is_fault_text(e.what) ? std::string("fault")
                                                                        : std::string("request"),
                                       e.what, e.active, e.waiting, e.ref});
    }
  }

  void collect_case_refs() {
    std::vector<const scenario::observation*> stack;
    for (const auto& c : sc_.cases) stack.push_back(&c.what);
    while (!stack.empty()) {
      const scenario::observation* o = stack.back();
      stack.pop_back();
      if (o->k == scenario::observation::kind::snapshot) snapshot_refs_.insert({o->target, o->at_ns});
      if (o->k == scenario::observation::kind::response || o->k == scenario::observation::kind::client_exception)
        kept_ids_.insert(o->target);
      for (const auto& ch : o->children) stack.push_back(&ch.second);
    }
  }

  void capture(const std::string& gate_name, vtime_ns t) {
    for (const auto& g : gates_)
      if (g->name == gate_name) rec_.snapshots.push_back(captured_snapshot{gate_name, t, g->gate().core().snap()});
  }

  gate_slot* find_gate(const std::string& name) {
    for (auto& g : gates_)
      if (g->name == name) return g.get();
    return nullptr;
  }

  // There is only ever one arrival pending: it waits in next_arrival_, and
  // its task refers to the world alone (small enough to need no allocation).
  void schedule_next_arrival() {
    std::optional<arrival> next = src_.next();
    if (!next) return;
    next_arrival_ = *next;
    sched_.schedule_at(next_arrival_.at_ns, [this] {
      req_ptr r = new_request();
      r->a = next_arrival_;
      schedule_next_arrival();
      arrive(std::move(r));
    });
  }

  void arrive(req_ptr r) {
    r->number = ++request_count_;
    r->gate = gates_[r->a.gate_index].get();
    r->service_ns = r->a.service_ns ? *r->a.service_ns : sc_.service.service_time.sample(service_rng_);
    r->out.arrived_ns = sched_.now_ns();
    r->keep = keep_all_ || (!kept_ids_.empty() && kept_ids_.count(r->a.id()) != 0);
    if (r->keep) r->out.id = r->a.id();
    ++rec_.metrics.requests;
    ++outstanding_;
    push_trace(nullptr, "arrive", 0, 0, r->number);
    if (lane* l = rec_.series.lane_for(r->number)) {
      l->arrived_ns = sched_.now_ns();
      if (r->a.spec != nullptr) l->id = r->a.spec->id;
    }

    std::optional<vtime_ns> read_timeout =
        r->a.client_timeout_ns ? r->a.client_timeout_ns : sc_.service.client_timeout_ns;
    if (sched_.now_ns() < burst_until_) read_timeout = burst_timeout_ns_;  // a client_timeout_burst
    if (read_timeout) {
      sched_.schedule_after(*read_timeout, [this, r] {
        if (r->out.responded) return;
        r->out.client_timed_out = true;
        ++rec_.metrics.client_timeouts;
        hit(p_client_gave_up_first);
        push_trace(nullptr, "client ReadTimeout", 0, 0, r->number);
        if (lane* l = rec_.series.lane_for(r->number)) l->gave_up_ns = sched_.now_ns();
        if (r->keep) rec_.outcomes[r->out.id] = r->out;
      });
    }
    if (r->a.cancel_at_ns && *r->a.cancel_at_ns <= sched_.now_ns()) {
      // Cancelled at (or before) its arrival: the handler sees the flag at its
      // first step and acquires nothing. Scheduled instead, the cancellation
      // would land after the handler's acquire at the same instant, so the
      // request would hold a slot it never should have had.
      push_trace(nullptr, "cancel", 0, 0, r->number);
      r->cancel_requested = true;
    } else if (r->a.cancel_at_ns) {
      sched_.schedule_at(*r->a.cancel_at_ns, [this, r] {
        if (r->out.responded) return;
        push_trace(nullptr, "cancel", 0, 0, r->number);
        r->cancel_requested = true;
        // Before its first step a handler has nothing to cancel: it sees the
        // flag when it starts. The disconnect reaches the handler through the
        // process (late after a stall; never once the process died).
        if (r->started) proc_.deliver(r->gen, [r] { r->emit_cancel(asio::cancellation_type::terminal); });
      });
    }
    accept(std::move(r));
  }

  // The server process takes the connection: refused while it is down; held
  // until a stall ends (accepted then in arrival order).
  void accept(req_ptr r) {
    if (!proc_.alive()) {
      respond(*r, 0, "connection_refused");
      return;
    }
    r->accepted = true;
    r->gen = proc_.generation();
    if (!proc_.stalled()) [[likely]] {
      handle(std::move(r));
      return;
    }
    const std::uint64_t gen = r->gen;
    proc_.deliver(gen, [this, r = std::move(r)]() mutable { handle(std::move(r)); });
  }

  // The server-side handler of one request: a chain of three steps, each the
  // completion of the operation the previous one started (acquire, then the
  // work through finish_worker), each bound to the request's cancellation
  // slot. A cancellation reaches the handler only as the error code of the
  // operation it is waiting on. (Callbacks rather than one coroutine per
  // request: see docs/architecture.md, "The request handler".)
  void handle(req_ptr r) {
    r->started = true;
    if (r->cancel_requested) {  // cancelled before the handler ran: nothing was acquired
      respond(*r, 499, "cancelled");
      return;
    }
    request_slot slot(r.get());
    r->gate->gate().async_acquire(asio::bind_cancellation_slot(slot, acquired{this, std::move(r)}));
  }

  struct acquired {
    world* w;
    req_ptr r;
    using allocator_type = request_allocator<void>;
    allocator_type get_allocator() const noexcept { return allocator_type(r.get()); }
    void operator()(error_code ec, sim_gate::lease lease) { w->on_acquired(std::move(r), ec, std::move(lease)); }
  };
  struct finished {
    world* w;
    req_ptr r;
    using allocator_type = request_allocator<void>;
    allocator_type get_allocator() const noexcept { return allocator_type(r.get()); }
    // finish_worker dispatches the completion on this executor. Without one
    // it would be Asio's system executor, which calls std::terminate when a
    // handler throws, so a broken invariant on the release in on_finished
    // could not reach the caller. Dispatched inside a running scheduler, the
    // sim executor runs it inline all the same.
    using executor_type = sim::sim_executor;
    executor_type get_executor() const noexcept { return w->sched_.get_executor(); }
    void operator()(error_code ec) { w->on_finished(std::move(r), ec); }
  };
  // The work at the portal: it cannot be cancelled, so it needs no timer,
  // only one task at its end.
  struct start_work {
    world* w;
    req_ptr r;
    template <class Done>
    void operator()(Done&& done) {
      const vtime_ns service_ns = r->service_ns;
      w->sched_.schedule_after(service_ns, [w = w, r = std::move(r), done = std::forward<Done>(done)]() mutable {
        w->portal_end(*r);
        std::move(done)(error_code{});
      });
    }
  };

  void on_acquired(req_ptr r, error_code ec, sim_gate::lease lease) {
    // The lifetime that held it ended: the handler is gone (its client got a
    // reset at the crash) and its lease goes back to the dead gate.
    if (r->gen != proc_.generation() || proc_.stalled()) [[unlikely]] {
      hold_acquired(std::move(r), ec, std::move(lease));
      return;
    }
    if (ec) {
      if (ec == gate::gate_errc::queue_full) respond(*r, 429, "queue_full");
      else if (ec == gate::gate_errc::wait_timeout) respond(*r, 503, "wait_timeout");
      else respond(*r, 499, "cancelled");
      return;
    }
    if (r->cancel_requested) {  // granted, then cancelled before the handler resumed: no work starts
      lease.reset();
      respond(*r, 499, "cancelled");
      return;
    }
    const vtime_ns granted_at = sched_.now_ns();
    r->granted_ns = granted_at;
    if (lane* l = rec_.series.lane_for(r->number)) l->granted_ns = granted_at;
    rec_.metrics.wait_ns.add(granted_at - r->out.arrived_ns);
    if (r->a.fail == scenario::failure::constructor) {
      hit(p_worker_failed_starting);
      lease.reset();
      respond(*r, 500, "internal_error");
      return;
    }
    if (sched_.now_ns() < portal_cut_until_) {  // a partition: the work cannot reach the portal
      lease.reset();
      respond(*r, 502, "portal_unreachable");
      return;
    }
    portal_begin(*r);
    if (sc_.gates[r->a.gate_index].world_mut == scenario::world_mutation::release_before_work_ends)
      lease.reset();  // broken on purpose: the slot frees while the work still runs
    r->lease = std::move(lease);
    request_slot slot(r.get());
    start_work work{this, r};
    gate::async_finish_worker(std::move(work), asio::bind_cancellation_slot(slot, finished{this, std::move(r)}));
  }

  // Out of line, off the path of a process without faults: held to the end
  // of a stall, or dropped with a dead lifetime (deliver decides).
  [[gnu::noinline]] void hold_acquired(req_ptr r, error_code ec, sim_gate::lease lease) {
    const std::uint64_t gen = r->gen;
    proc_.deliver(gen, [this, r = std::move(r), ec, lease = std::move(lease)]() mutable {
      on_acquired(std::move(r), ec, std::move(lease));
    });
  }
  [[gnu::noinline]] void hold_finished(req_ptr r, error_code wec) {
    const std::uint64_t gen = r->gen;
    proc_.deliver(gen, [this, r = std::move(r), wec]() mutable { on_finished(std::move(r), wec); });
  }

  void on_finished(req_ptr r, error_code wec) {
    // The work ended at the portal (portal_end ran); the handler that waited
    // for it belongs to the process: gone after a crash, late after a stall.
    if (r->gen != proc_.generation() || proc_.stalled()) [[unlikely]] {
      hold_finished(std::move(r), wec);
      return;
    }
    rec_.metrics.service_ns.add(sched_.now_ns() - r->granted_ns);
    r->lease.reset();  // only now has the work really ended
    if (wec) {
      hit(p_cancelled_working);
      respond(*r, 499, "cancelled");
    }
    else {
      respond(*r, 200, "completed");
    }
  }

  // --- faults (the FIFO vocabulary: docs/scenarios.md, "Faults in a FIFO scenario") ---

  process_executor process_ex() { return process_executor(sched_.get_executor(), proc_); }

  void apply_fault(const scenario::fault_spec& f) {
    using fk = scenario::fault_kind;
    const vtime_ns now = sched_.now_ns();
    const vtime_ns dur = f.duration_ns.value_or(0);
    fault_window fw;
    fw.kind = scenario::fault_kind_names[static_cast<std::size_t>(f.kind)];
    fw.target = f.target    ? scenario::to_string(*f.target)
                : f.between ? scenario::to_string(f.between->first) + "|" + scenario::to_string(f.between->second)
                            : std::string();
    fw.start_ns = now;
    fw.end_ns = now + (f.kind == fk::crash && !f.duration_ns ? 0 : dur);
    rec_.series.add_window(std::move(fw));
    switch (f.kind) {
      case fk::crash:
        push_trace(nullptr, fault_texts[0], 0, 0, 0);
        crash_process();
        if (f.duration_ns)
          sched_.schedule_after(dur, [this] {
            push_trace(nullptr, fault_texts[1], 0, 0, 0);
            proc_.restart();
            sweep_dead_gates();
          });
        break;
      case fk::pause:
        push_trace(nullptr, fault_texts[2], 0, 0, 0);
        proc_.stall(now + dur);
        break;
      case fk::partition:
        push_trace(nullptr, fault_texts[3], 0, 0, 0);
        portal_cut_until_ = std::max(portal_cut_until_, now + dur);
        break;
      case fk::client_timeout_burst:
        push_trace(nullptr, fault_texts[4], 0, 0, 0);
        burst_until_ = now + dur;
        burst_timeout_ns_ = f.client_timeout_ns;
        break;
      default:
        // The loader refuses every other kind for a FIFO scenario.
        throw std::invalid_argument("/faults: a FIFO scenario has no fault of kind " + fw.kind);
    }
  }

  // Every lease, waiter and handler of the process is lost with it; work it
  // started at the portal runs on there to its end (the portal then sees it
  // beside whatever the next lifetime admits). The clients of the requests
  // it held see their connection reset, in request order.
  void crash_process() {
    if (!proc_.alive()) return;
    // Held by reference first: the crash drops the work a stall was holding,
    // and with it the last reference to a request not yet handled.
    std::vector<req_ptr> held;
    for (const auto& p : all_requests_)
      if (p->refs > 0 && p->accepted && !p->out.responded) held.emplace_back(p.get());
    std::sort(held.begin(), held.end(), [](const req_ptr& a, const req_ptr& b) { return a->number < b->number; });
    proc_.crash();
    for (const req_ptr& p : held) respond(*p, 0, "connection_reset");
    sweep_dead_gates();
    for (auto& g : gates_) dead_gates_.push_back(dead_gate{g->rebuild(process_ex()), -1});
    sample_series();
  }

  // A run with many crashes must not keep every dead gate (each holds its
  // event log). A dead gate gets no new work: once nothing of it is left (no
  // lease counted, no waiter) it stays so, and only a claim posted at that
  // same instant may still refer to it. So a gate seen idle is freed at a
  // later sweep (a crash or a restart), when that instant's posted work has
  // run. A broken core (a mutation) may have leases it no longer counts:
  // those gates are kept.
  void sweep_dead_gates() {
    const vtime_ns now = sched_.now_ns();
    std::erase_if(dead_gates_, [now](dead_gate& d) {
      const sim_gate& g = *d.gate;
      const bool idle = g.core().cfg().mut == fifo::mutation::none && g.core().active() == 0 &&
                        g.core().waiting() == 0 && g.pending_waiters() == 0;
      if (!idle) return false;
      if (d.idle_since_ns >= 0 && d.idle_since_ns < now) return true;
      if (d.idle_since_ns < 0) d.idle_since_ns = now;
      return false;
    });
  }

  // Request states are recycled: a run allocates only as many as are ever
  // in flight at once.
  req_ptr new_request() {
    request_state* p;
    if (free_requests_.empty()) {
      all_requests_.push_back(std::make_unique<request_state>());
      // recycle() runs in destructors, also while a bad_alloc unwinds: room
      // for every state is kept so that it never allocates.
      if (free_requests_.capacity() < all_requests_.size()) free_requests_.reserve(2 * all_requests_.size());
      p = all_requests_.back().get();
      p->owner = this;
    } else {
      p = free_requests_.back();
      free_requests_.pop_back();
    }
    return req_ptr(p);
  }

 public:
  void recycle(request_state* p) noexcept {
    p->clear();
    free_requests_.push_back(p);
  }

 private:
  void respond(request_state& r, int http_status, const char* status) {
    if (tearing_down_) return;
    r.out.responded = true;
    r.out.http_status = http_status;
    r.out.status = status;
    r.out.responded_ns = sched_.now_ns();
    --outstanding_;
    if (http_status == 200)
      ++rec_.metrics.completed;
    else
      ++rec_.metrics.refused[status];
    push_trace(nullptr, status, http_status, 0, r.number);
    if (lane* l = rec_.series.lane_for(r.number)) {
      l->ended_ns = sched_.now_ns();
      l->outcome = status;
    }
    if (r.keep) rec_.outcomes[r.out.id] = r.out;
  }

  // At checks.liveness_horizon `lh_ns`: every request that arrived has ended and every gate is idle.
  void check_idle(vtime_ns lh_ns) {
    std::string why;
    if (outstanding_ != 0) why = std::to_string(outstanding_) + " requests that arrived had not ended";
    for (const auto& g : gates_) {
      const auto& core = g->gate().core();
      if (why.empty() && (core.active() != 0 || core.waiting() != 0))
        why = g->name + " was not idle: active " + std::to_string(core.active()) + ", waiting " +
              std::to_string(core.waiting());
    }
    check(inv_liveness, why.empty(), [&] {
      return "at checks.liveness_horizon (" + scenario::format_duration(lh_ns) + ") " + why;
    });
  }

  void finish() {
    // A release that broke the core inside a lease's destructor: raise it
    // here, where the caller adds the seed and the replay command.
    for (const auto& g : gates_) g->gate().rethrow_failure();
    for (const auto& g : gates_)
      if (g->gate().core().cfg().event_log_capacity > 0 &&
          g->gate().core().last_order() > static_cast<std::uint64_t>(g->gate().core().cfg().event_log_capacity))
        hit(p_event_log_wrapped);
    rec_.metrics.simulated_ns = sched_.now_ns();
    rec_.diagnostics = {.events = sched_.events_run(), .sequence_numbers = sched_.next_sequence()};
    if (stopped_) {
      copy_trace();
      return;
    }
    // A run cut short is inconclusive: what it did not reach is not judged.
    const std::uint64_t total = src_.total();
    const std::uint64_t pending = total - (rec_.metrics.requests - static_cast<std::uint64_t>(outstanding_));
    rec_.inconclusive = guard_.reason(rec_.status, sched_.now_ns(), sc_.checks.horizon_ns, pending, total);
    if (rec_.inconclusive) {
      copy_trace();
      return;
    }
    std::string why;
    if (!src_.exhausted() || outstanding_ != 0)
      why = std::to_string(outstanding_) + " requests never ended";
    const bool all_ended = why.empty();
    for (const auto& g : gates_) {
      const auto& core = g->gate().core();
      // Every request has answered, so no handler holds a lease: whatever the
      // gate still counts as granted and unreleased has leaked.
      if (all_ended)
        check(inv_released_once, g->granted == g->released, [&] {
          return g->name + ": " + std::to_string(g->granted) + " leases granted but " +
                 std::to_string(g->released) + " released after every request ended";
        });
      if (why.empty() && (core.active() != 0 || core.waiting() != 0))
        why = g->name + " is not idle at the end: active " + std::to_string(core.active()) + ", waiting " +
              std::to_string(core.waiting());
    }
    check(inv_liveness, why.empty(), [&] { return why; });
    copy_trace();
  }

  const scenario::scenario& sc_;
  sim::scheduler sched_;
  fifo_process proc_;
  run_guard guard_;
  sim::prng service_rng_;
  run_record rec_;
  arrival_source src_;
  std::uint64_t request_count_ = 0;
  std::int64_t outstanding_ = 0;
  std::int64_t portal_inflight_ = 0;
  std::int64_t portal_cap_ = 0;
  std::set<std::pair<std::string, vtime_ns>> snapshot_refs_;
  std::set<std::string> kept_ids_;
  bool keep_all_ = false;
  bool stopped_ = false;
  bool tearing_down_ = false;
  bool frozen_trace_ = false;
  vtime_ns burst_until_ = 0;       // client_timeout_burst: arrivals before this get burst_timeout_ns_
  vtime_ns burst_timeout_ns_ = 0;
  vtime_ns portal_cut_until_ = 0;  // portal partition: work cannot start before this
  std::size_t trace_cap_ = 64;
  std::uint64_t trace_total_ = 0;
  std::vector<live_entry> trace_;  // a ring once trace_cap_ entries long
  std::size_t trace_head_ = 0;     // the oldest entry once the ring is full
  arrival next_arrival_;
  std::vector<std::unique_ptr<request_state>> all_requests_;
  std::vector<request_state*> free_requests_;
  // Last: pending work is destroyed (and its request states recycled) before
  // the storage above goes.
  std::vector<std::unique_ptr<gate_slot>> gates_;
  struct dead_gate {
    std::unique_ptr<sim_gate> gate;
    vtime_ns idle_since_ns;  // when a sweep first saw it idle, or -1
  };
  std::vector<dead_gate> dead_gates_;  // gates of ended process lifetimes still referred to
};

void recycle(request_state* r) noexcept { r->owner->recycle(r); }

void gate_slot::on_event(const fifo::event& e) { owner.on_gate_event(*this, e); }
void gate_slot::on_gate_change(const fifo::fifo_gate& core) { owner.on_gate_change(*this, core); }

}  // namespace

run_record run_scenario(const scenario::scenario& sc, std::uint64_t seed) {
  for (const auto& g : sc.gates)
    if (g.kind != scenario::gate_kind::fifo)
      throw std::invalid_argument("/gates: a scenario with a lease gate runs through run_all");
  world w(sc, seed);
  return w.run();
}

namespace {

// One run per lease variant, or the FIFO world's one run, of a scenario whose
// faults are all in its schedule.
std::vector<run_record> run_gates(const scenario::scenario& sc, std::uint64_t seed,
                                  const lease_run_options& lease_options) {
  std::vector<run_record> out;
  if (scenario::world_of(sc) == check::world_fifo) {
    out.push_back(run_scenario(sc, seed));
    return out;
  }
  // The loader refuses any other gate beside a lease gate.
  ADMIT_ASSERT(sc.gates.size() == 1, "a lease scenario has exactly its one lease gate");
  for (scenario::lease_variant v : sc.gates.front().lease.variants)
    out.push_back(run_lease_scenario(sc, seed, v, lease_options));
  return out;
}

}  // namespace

std::vector<run_record> run_all(const scenario::scenario& sc, std::uint64_t seed,
                                const lease_run_options& lease_options) {
  // faults.rates: the faults they give for this seed join the schedule (fault_draw.hpp).
  if (sc.faults.rates && sc.faults.rates->any()) return run_all(with_drawn_faults(sc, seed), seed, lease_options);
  std::vector<run_record> out = run_gates(sc, seed, lease_options);
  // A schedule cut by the draw limit is not the one the rates describe.
  if (!sc.faults.draw_limited.empty()) {
    std::string kinds;
    for (scenario::fault_kind k : sc.faults.draw_limited)
      kinds += std::string(kinds.empty() ? "" : ", ") + scenario::fault_kind_names[static_cast<std::size_t>(k)];
    for (run_record& r : out)
      if (!r.inconclusive)
        r.inconclusive = inconclusive_reason{
            "fault_draw_limit", "faults.rates asked for more than " + std::to_string(drawn_faults_per_kind_max) +
                                    " faults of one kind before rates.until (" + kinds +
                                    "); the run used the first ones only"};
  }
  return out;
}

}  // namespace admit::world
