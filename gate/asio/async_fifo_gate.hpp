// async_fifo_gate: the FIFO gate core driven through Asio.
//
// Protocol. `async_acquire(token)` completes with `(error_code, lease)`:
//   * admitted at once, or later when promoted: no error and a live lease;
//   * `gate_errc::queue_full` when the queue had no room (HTTP 429);
//   * `gate_errc::wait_timeout` when the wait deadline passed (HTTP 503);
//   * `operation_aborted` when the operation was cancelled through the
//     handler's cancellation slot while waiting (any cancellation type).
// Immediate outcomes complete through the handler's executor, never inline.
//
// The promotion race. A release hands the slot to the oldest waiter inside
// the core at once, but the waiter resumes only when a posted "claim" runs,
// exactly as a woken coroutine resumes later in its event loop. If the
// waiter's deadline or a cancellation lands first, the core releases the
// handed-over lease itself (exactly once) and the waiter sees the refusal.
//
// Lease. A move-only RAII object: destroying it (or reset()) releases the
// slot, which may promote the next waiter. Hold it until the work has really
// ended: see finish_worker.hpp.
//
// Broken invariants. The core checks its invariants on every call and raises
// admit::assertion_failure when one breaks. reset() (and a move-assignment
// over a live lease) lets it reach its caller, who can report it with what
// it knows (the simulator: the seed and the replay command). A destructor
// cannot throw: it keeps the first such failure in the gate, and the gate's
// next operation (or rethrow_failure()) raises it, so a broken release is
// never swallowed and never turns into std::terminate.
//
// Core. `Core` is any fifo::gate_core (gate/fifo/gate_core.hpp): admitsim's
// fifo_gate by default, or a team's own; the adapter relies on its answers
// alone (a promoted ticket it never queued is a broken core: an assertion).
//
// Environment. `Env` supplies the executor, the timer and the clock:
//   using executor_type; using timer_type;            // timer_type(executor_type)
//   static std::int64_t now_ns(const executor_type&);
//   static void expires_at(timer_type&, std::int64_t deadline_ns);
// so the same adapter runs on a real io_context (steady_env.hpp) and on the
// simulator's virtual clock.
//
// Lifetime. Leases and pending operations refer to the gate: destroy it only
// after the work that holds them (a simulator shuts its scheduler down
// first). The destructor drops waiters that are still queued, unrun.
#pragma once

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/blocking.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/asio/require.hpp>
#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <utility>

#include "gate/admit_assert.hpp"
#include "gate/asio/gate_errc.hpp"
#include "gate/fifo/fifo_gate.hpp"
#include "gate/fifo/gate_core.hpp"

namespace admit::gate {

// Told after every call into the core, with the core.
template <class Core>
class core_observer {
 public:
  virtual void on_gate_change(const Core& core) = 0;

 protected:
  ~core_observer() = default;
};
using fifo_observer = core_observer<fifo::fifo_gate>;

template <class Env, fifo::gate_core Core = fifo::fifo_gate>
class async_fifo_gate {
 public:
  using executor_type = typename Env::executor_type;
  using timer_type = typename Env::timer_type;
  using core_type = Core;

  class lease {
   public:
    lease() noexcept = default;
    lease(lease&& o) noexcept : gate_(std::exchange(o.gate_, nullptr)) {}
    lease& operator=(lease&& o) {
      if (this != &o) {
        reset();
        gate_ = std::exchange(o.gate_, nullptr);
      }
      return *this;
    }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    ~lease() {
      if (gate_ == nullptr) return;
      async_fifo_gate* g = gate_;
      try {
        reset();
      } catch (...) {
        g->keep_failure(std::current_exception());
      }
    }

    explicit operator bool() const noexcept { return gate_ != nullptr; }
    // Ends the lease now (idempotent). Throws what the core raises.
    void reset() {
      if (gate_ != nullptr) std::exchange(gate_, nullptr)->release_lease();
    }

   private:
    friend class async_fifo_gate;
    explicit lease(async_fifo_gate* g) noexcept : gate_(g) {}
    async_fifo_gate* gate_ = nullptr;
  };

  async_fifo_gate(const executor_type& ex, fifo::config cfg) : ex_(ex), core_(cfg) {}
  // The core built from `args` (a core that takes more than a config).
  template <class... A>
  async_fifo_gate(const executor_type& ex, std::in_place_t, A&&... args)
      : ex_(ex), core_(std::forward<A>(args)...) {}
  async_fifo_gate(const async_fifo_gate&) = delete;
  async_fifo_gate& operator=(const async_fifo_gate&) = delete;
  ~async_fifo_gate() { shutdown(); }

  executor_type get_executor() const noexcept { return ex_; }
  const Core& core() const noexcept { return core_; }
  std::size_t pending_waiters() const noexcept { return waiter_count_; }
  void set_observer(core_observer<Core>* o) noexcept { observer_ = o; }
  // Every event the core logs, as it happens (see fifo::event_sink).
  void set_event_sink(fifo::event_sink* s) noexcept { core_.set_event_sink(s); }

  template <class Token>
  auto async_acquire(Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, lease)>(
        initiate_acquire{this}, token);
  }

  // Raises, once, a failure a lease's destructor kept (see "Broken invariants").
  void rethrow_failure() {
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  }

  // Drops every queued waiter without completing it (their handlers are
  // destroyed). For teardown only.
  void shutdown() noexcept {
    while (!waiters_.empty()) {
      waiter_base* w = waiters_.front().w;
      waiters_.pop_front();
      if (w != nullptr) {
        --waiter_count_;
        w->destroy();
      }
    }
  }

 private:
  struct waiter_base {
    explicit waiter_base(const executor_type& ex) : timer(ex) {}
    // Completes the handler (frees this).
    virtual void complete(boost::system::error_code ec, lease l, bool post_it) = 0;
    // Destroys the handler unrun (frees this).
    virtual void destroy() noexcept = 0;
    timer_type timer;

   protected:
    ~waiter_base() = default;  // freed through the handler's allocator, never deleted as waiter_base
  };

  struct cancel_handler {
    async_fifo_gate* gate;
    fifo::ticket_id ticket;
    void operator()(boost::asio::cancellation_type_t type) {
      if (type != boost::asio::cancellation_type::none) gate->on_cancel(ticket);
    }
  };

  // Allocated, as Asio's own operations are, with the handler's associated
  // allocator (by default Asio's recycling allocator), and freed before the
  // handler runs.
  template <class Handler>
  struct waiter final : waiter_base {
    using allocator_type = typename std::allocator_traits<boost::asio::associated_allocator_t<
        Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<waiter>;

    waiter(Handler&& h, const executor_type& ex) : waiter_base(ex), handler(std::move(h)) {}

    static allocator_type allocator_of(const Handler& h) {
      return allocator_type(boost::asio::get_associated_allocator(h, boost::asio::recycling_allocator<void>()));
    }
    static waiter* create(Handler&& h, const executor_type& ex) {
      allocator_type a = allocator_of(h);
      waiter* mem = std::allocator_traits<allocator_type>::allocate(a, 1);
      try {
        return ::new (static_cast<void*>(mem)) waiter(std::move(h), ex);
      } catch (...) {
        std::allocator_traits<allocator_type>::deallocate(a, mem, 1);
        throw;
      }
    }
    void free_self(allocator_type a) noexcept {
      this->~waiter();
      std::allocator_traits<allocator_type>::deallocate(a, this, 1);
    }

    void complete(boost::system::error_code ec, lease l, bool post_it) override {
      auto slot = boost::asio::get_associated_cancellation_slot(handler);
      if (slot.is_connected()) slot.clear();
      allocator_type a = allocator_of(handler);
      Handler h(std::move(handler));
      auto ex = boost::asio::get_associated_executor(h, this->timer.get_executor());
      free_self(a);
      auto fn = [h = std::move(h), ec, l = std::move(l)]() mutable { std::move(h)(ec, std::move(l)); };
      if (post_it)
        boost::asio::post(ex, std::move(fn));
      else
        boost::asio::dispatch(ex, std::move(fn));
    }
    void destroy() noexcept override {
      auto slot = boost::asio::get_associated_cancellation_slot(handler);
      if (slot.is_connected()) slot.clear();
      free_self(allocator_of(handler));
    }
    Handler handler;
  };

  struct initiate_acquire {
    async_fifo_gate* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      self->start(std::forward<Handler>(handler));
    }
  };

  template <class Handler>
  void start(Handler&& handler) {
    rethrow_failure();
    using handler_t = std::decay_t<Handler>;
    const fifo::ticket_id ticket = next_ticket_++;
    const fifo::acquire_result r = core_.acquire(ticket, Env::now_ns(ex_));
    notify();
    if (r.outcome != fifo::acquire_outcome::queued) {
      lease l;
      if (r.outcome == fifo::acquire_outcome::admitted) l = lease(this);
      auto ex = boost::asio::get_associated_executor(handler, ex_);
      // The error code is made when the handler runs: a posted function that
      // small is stored without an allocation.
      boost::asio::post(ex, [h = handler_t(std::forward<Handler>(handler)), l = std::move(l)]() mutable {
        boost::system::error_code ec;
        if (!l) ec = gate_errc::queue_full;
        std::move(h)(ec, std::move(l));
      });
      return;
    }
    auto* w = waiter<handler_t>::create(handler_t(std::forward<Handler>(handler)), ex_);
    waiters_.push_back(queued{ticket, w});  // tickets only grow: the deque stays sorted
    ++waiter_count_;
    Env::expires_at(w->timer, r.deadline_ns);
    w->timer.async_wait([this, ticket](boost::system::error_code ec) {
      if (!ec) on_deadline(ticket);
    });
    auto slot = boost::asio::get_associated_cancellation_slot(w->handler);
    if (slot.is_connected()) slot.template emplace<cancel_handler>(cancel_handler{this, ticket});
  }

  waiter_base* take_waiter(fifo::ticket_id t) {
    // Promotions and deadlines take the oldest waiter: usually the front.
    auto it = waiters_.begin();
    if (it == waiters_.end()) return nullptr;
    if (it->ticket != t) {
      it = std::lower_bound(waiters_.begin(), waiters_.end(), t,
                            [](const queued& q, fifo::ticket_id v) { return q.ticket < v; });
      if (it == waiters_.end() || it->ticket != t) return nullptr;
    }
    waiter_base* w = std::exchange(it->w, nullptr);
    if (w == nullptr) return nullptr;
    --waiter_count_;
    while (!waiters_.empty() && waiters_.front().w == nullptr) waiters_.pop_front();
    return w;
  }

  void on_deadline(fifo::ticket_id t) {
    rethrow_failure();
    const fifo::leave_result r = core_.expire(t, Env::now_ns(ex_));
    notify();
    if (r.outcome == fifo::leave_outcome::not_waiting) return;
    if (waiter_base* w = take_waiter(t)) w->complete(gate_errc::wait_timeout, lease{}, false);
    if (r.promoted) hand_over(*r.promoted);
  }

  void on_cancel(fifo::ticket_id t) {
    rethrow_failure();
    const fifo::leave_result r = core_.cancel(t, Env::now_ns(ex_));
    notify();
    if (r.outcome == fifo::leave_outcome::not_waiting) return;
    // Called from inside a cancellation emit: complete later, never inline.
    if (waiter_base* w = take_waiter(t))
      w->complete(boost::asio::error::operation_aborted, lease{}, true);
    if (r.promoted) hand_over(*r.promoted);
  }

  // The core promoted `t`; its waiter resumes when the posted claim runs.
  void hand_over(fifo::ticket_id t) {
    boost::asio::post(ex_, [this, t] { on_claim(t); });
  }

  void on_claim(fifo::ticket_id t) {
    rethrow_failure();
    // false: the deadline or a cancellation won, and the core released the lease itself.
    if (!core_.claim(t, Env::now_ns(ex_))) return;
    notify();
    waiter_base* w = take_waiter(t);
    ADMIT_ASSERT(w != nullptr, "a handed-over ticket has a waiter");
    w->complete(boost::system::error_code{}, lease(this), false);
  }

  void keep_failure(std::exception_ptr e) noexcept {
    if (!failure_) failure_ = std::move(e);
  }

  void release_lease() {
    const fifo::release_result r = core_.release(Env::now_ns(ex_));
    notify();
    if (r.promoted) hand_over(*r.promoted);
  }

  void notify() {
    if (observer_ != nullptr) observer_->on_gate_change(core_);
  }

  executor_type ex_;
  Core core_;
  fifo::ticket_id next_ticket_ = 1;
  // Waiters in ticket order (tickets are handed out in increasing order); a
  // taken waiter leaves a null entry until it reaches the front.
  struct queued {
    fifo::ticket_id ticket;
    waiter_base* w;
  };
  std::deque<queued> waiters_;
  std::size_t waiter_count_ = 0;
  core_observer<Core>* observer_ = nullptr;
  std::exception_ptr failure_;  // kept by a lease's destructor until the next operation
};

}  // namespace admit::gate
