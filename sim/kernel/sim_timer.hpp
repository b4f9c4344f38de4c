// sim_timer: an Asio-style waitable timer on virtual time.
//
// Protocol. `expires_at`/`expires_after` set the expiry and cancel pending
// waits (as Asio's timers do). `async_wait(token)` accepts any completion
// token — a callback, `use_awaitable_t<sim_executor>`, `deferred`, ... — and
// completes with success at the expiry, or with `operation_aborted` when the
// wait is cancelled by `cancel()`, by a new expiry, by the timer's destruction
// or through the per-operation cancellation slot associated with the handler
// (which is how `||` on awaitables and parallel_group stop the loser).
//
// Ownership. A pending wait is owned by the scheduler's task that will
// complete it: the timer entry while the wait is armed, a ready-queue entry
// once it has been cancelled. So tearing down a scheduler destroys every
// suspended wait exactly once, and a timer only links its waits for
// cancellation. A sim_timer must not outlive its scheduler.
//
// Memory. A wait's operation is allocated, as Asio's own operations are, with
// the handler's associated allocator, by default Asio's recycling_allocator:
// while the scheduler runs, a completed wait's block is reused by the next
// wait instead of going back to malloc (see scheduler.cpp).
#pragma once

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <memory>
#include <utility>

#include "sim/kernel/scheduler.hpp"
#include "sim/kernel/sim_executor.hpp"

namespace admit::sim {

class sim_timer {
 public:
  using executor_type = sim_executor;

  explicit sim_timer(const sim_executor& ex) noexcept : ex_(ex) {}
  explicit sim_timer(scheduler& s) noexcept : ex_(s.get_executor()) {}
  sim_timer(const sim_timer&) = delete;
  sim_timer& operator=(const sim_timer&) = delete;
  ~sim_timer() { cancel(); }

  executor_type get_executor() const noexcept { return ex_; }
  vtime_ns expiry() const noexcept { return expiry_ns_; }

  std::size_t expires_at(vtime_ns t_ns) {
    std::size_t n = cancel();
    expiry_ns_ = t_ns;
    return n;
  }
  std::size_t expires_after(vtime_ns d_ns) {
    ADMIT_ASSERT(d_ns >= 0, "a timer delay cannot be negative");
    vtime_ns now = ex_.sched().now_ns();
    return expires_at(d_ns > vtime_max - now ? vtime_max : now + d_ns);
  }
  std::size_t expires_after(std::chrono::nanoseconds d) { return expires_after(d.count()); }

  // Completes every pending wait with operation_aborted. Returns how many.
  std::size_t cancel() noexcept {
    std::size_t n = 0;
    while (head_ != nullptr) {
      abort_one(head_);
      ++n;
    }
    return n;
  }

  std::size_t pending_waits() const noexcept {
    std::size_t n = 0;
    for (op_base* p = head_; p != nullptr; p = p->next) ++n;
    return n;
  }

  template <class Token>
  auto async_wait(Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
        initiate_wait{this}, token);
  }

 private:
  struct op_base {
    sim_timer* owner = nullptr;
    op_base* prev = nullptr;
    op_base* next = nullptr;
    timer_handle handle{};
    boost::system::error_code ec{};
    virtual void complete() = 0;  // invokes the handler; frees this
    virtual void destroy() noexcept = 0;  // drops the handler unrun; frees this

   protected:
    ~op_base() = default;  // ops are freed through their allocator, never deleted as op_base
  };

  // The task stored in the scheduler: owns the op until it completes.
  struct op_task {
    op_base* op;
    explicit op_task(op_base* o) noexcept : op(o) {}
    op_task(op_task&& o) noexcept : op(std::exchange(o.op, nullptr)) {}
    op_task(const op_task&) = delete;
    ~op_task() {
      if (op != nullptr) {
        op_base* o = std::exchange(op, nullptr);
        if (o->owner != nullptr) o->owner->unlink(o);
        o->destroy();
      }
    }
    void operator()() {
      op_base* o = std::exchange(op, nullptr);
      if (o->owner != nullptr) o->owner->unlink(o);
      o->complete();
    }
  };

  struct cancel_handler {
    sim_timer* timer;
    op_base* op;
    void operator()(boost::asio::cancellation_type_t type) {
      if (type != boost::asio::cancellation_type::none && op->owner == timer) timer->abort_one(op);
    }
  };

  template <class Handler>
  struct op final : op_base {
    using work_executor = std::decay_t<decltype(boost::asio::prefer(
        std::declval<boost::asio::associated_executor_t<Handler, sim_executor>>(),
        boost::asio::execution::outstanding_work.tracked))>;
    using allocator_type = typename std::allocator_traits<
        boost::asio::associated_allocator_t<Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<op>;

    Handler handler;
    work_executor work;

    op(Handler&& h, const sim_executor& io_ex)
        : handler(std::move(h)),
          work(boost::asio::prefer(boost::asio::get_associated_executor(handler, io_ex),
                                   boost::asio::execution::outstanding_work.tracked)) {}

    static allocator_type allocator_of(const Handler& h) {
      return allocator_type(boost::asio::get_associated_allocator(h, boost::asio::recycling_allocator<void>()));
    }
    static op* create(Handler&& h, const sim_executor& io_ex) {
      allocator_type a = allocator_of(h);
      op* mem = std::allocator_traits<allocator_type>::allocate(a, 1);
      try {
        return ::new (static_cast<void*>(mem)) op(std::move(h), io_ex);
      } catch (...) {
        std::allocator_traits<allocator_type>::deallocate(a, mem, 1);
        throw;
      }
    }
    // Destroys and frees this op with `a`, taken from the handler before it
    // was moved out.
    void free_self(allocator_type a) noexcept {
      this->~op();
      std::allocator_traits<allocator_type>::deallocate(a, this, 1);
    }

    void complete() override {
      auto slot = boost::asio::get_associated_cancellation_slot(handler);
      if (slot.is_connected()) slot.clear();
      allocator_type a = allocator_of(handler);
      Handler h(std::move(handler));
      work_executor ex(std::move(work));
      boost::system::error_code e = ec;
      // Freed before the handler runs, so the handler's next wait can reuse
      // this block (Asio's rule for operations).
      free_self(a);
      boost::asio::dispatch(ex, [h = std::move(h), e]() mutable { std::move(h)(e); });
    }
    void destroy() noexcept override {
      auto slot = boost::asio::get_associated_cancellation_slot(handler);
      if (slot.is_connected()) slot.clear();
      free_self(allocator_of(handler));
    }
  };

  struct initiate_wait {
    sim_timer* self;
    template <class Handler>
    void operator()(Handler&& handler) const {
      using handler_t = std::decay_t<Handler>;
      auto* o = op<handler_t>::create(std::forward<Handler>(handler), self->ex_);
      o->owner = self;
      self->link(o);
      auto slot = boost::asio::get_associated_cancellation_slot(o->handler);
      o->handle = self->ex_.sched().schedule_at(self->expiry_ns_, unique_task(op_task(o)));
      if (slot.is_connected()) slot.template emplace<cancel_handler>(cancel_handler{self, o});
    }
  };

  void link(op_base* o) noexcept {
    o->prev = nullptr;
    o->next = head_;
    if (head_ != nullptr) head_->prev = o;
    head_ = o;
  }
  void unlink(op_base* o) noexcept {
    if (o->prev != nullptr) o->prev->next = o->next; else head_ = o->next;
    if (o->next != nullptr) o->next->prev = o->prev;
    o->prev = o->next = nullptr;
    o->owner = nullptr;
  }
  // Moves a pending wait from the timer heap to the ready queue, to complete
  // with operation_aborted at the current instant.
  void abort_one(op_base* o) noexcept {
    scheduler& s = ex_.sched();
    unique_task t = s.take(o->handle);
    unlink(o);
    o->ec = boost::asio::error::operation_aborted;
    if (t) s.post(std::move(t));
  }

  sim_executor ex_;
  vtime_ns expiry_ns_ = 0;
  op_base* head_ = nullptr;
};

}  // namespace admit::sim
