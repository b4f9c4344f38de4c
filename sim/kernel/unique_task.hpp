// unique_task: a move-only, type-erased `void()` callable with inline storage.
//
// Asio completion handlers are move-only, so std::function cannot hold them.
// Callables up to `inline_bytes` that are nothrow-movable live inside the
// task (no allocation); larger ones go to the heap. The scheduler's ready
// queue and timer heap store these by value.
//
// Asio's binders. asio::post and asio::dispatch hand the executor their
// handler wrapped in detail::binder0 (binder1, binder2 with arguments), whose
// move constructor is not declared noexcept although it only moves the
// handler and arguments it holds. moves_without_throwing looks through them,
// so a posted handler that fits is stored inline like any other callable
// instead of costing an allocation per post.
#pragma once

#include <boost/asio/detail/bind_handler.hpp>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace admit::sim {

template <class D>
struct moves_without_throwing : std::is_nothrow_move_constructible<D> {};
template <class H>
struct moves_without_throwing<boost::asio::detail::binder0<H>> : moves_without_throwing<H> {};
template <class H, class A1>
struct moves_without_throwing<boost::asio::detail::binder1<H, A1>>
    : std::bool_constant<moves_without_throwing<H>::value && std::is_nothrow_move_constructible_v<A1>> {};
template <class H, class A1, class A2>
struct moves_without_throwing<boost::asio::detail::binder2<H, A1, A2>>
    : std::bool_constant<moves_without_throwing<H>::value && std::is_nothrow_move_constructible_v<A1> &&
                         std::is_nothrow_move_constructible_v<A2>> {};

class unique_task {
 public:
  static constexpr std::size_t inline_bytes = 48;

  unique_task() noexcept = default;

  template <class F, class D = std::decay_t<F>,
            class = std::enable_if_t<!std::is_same_v<D, unique_task> && std::is_invocable_v<D&>>>
  unique_task(F&& f) {  // NOLINT(google-explicit-constructor): a task is its callable
    if constexpr (fits_inline<D>()) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      vt_ = &inline_vtable<D>;
    } else {
      *reinterpret_cast<D**>(buf_) = new D(std::forward<F>(f));
      vt_ = &heap_vtable<D>;
    }
  }

  unique_task(unique_task&& other) noexcept : vt_(other.vt_) {
    if (vt_ != nullptr) {
      vt_->relocate(buf_, other.buf_);
      other.vt_ = nullptr;
    }
  }

  unique_task& operator=(unique_task&& other) noexcept {
    if (this != &other) {
      reset();
      vt_ = other.vt_;
      if (vt_ != nullptr) {
        vt_->relocate(buf_, other.buf_);
        other.vt_ = nullptr;
      }
    }
    return *this;
  }

  unique_task(const unique_task&) = delete;
  unique_task& operator=(const unique_task&) = delete;
  ~unique_task() { reset(); }

  explicit operator bool() const noexcept { return vt_ != nullptr; }

  // Runs the callable once and destroys it; the task is empty afterwards.
  void operator()() {
    const vtable* vt = vt_;
    vt_ = nullptr;
    vt->invoke_and_destroy(buf_);
  }

  void reset() noexcept {
    if (vt_ != nullptr) {
      vt_->destroy(buf_);
      vt_ = nullptr;
    }
  }

 private:
  struct vtable {
    void (*invoke_and_destroy)(void*);
    void (*destroy)(void*) noexcept;
    void (*relocate)(void* dst, void* src) noexcept;
  };

  template <class D>
  static constexpr bool fits_inline() {
    return sizeof(D) <= inline_bytes && alignof(D) <= alignof(std::max_align_t) &&
           moves_without_throwing<D>::value;
  }

  template <class D>
  static constexpr vtable inline_vtable{
      [](void* p) {
        D& d = *std::launder(static_cast<D*>(p));
        // Move out first so a callable that re-enters the scheduler cannot
        // observe a half-destroyed task.
        D local(std::move(d));
        d.~D();
        local();
      },
      [](void* p) noexcept { std::launder(static_cast<D*>(p))->~D(); },
      [](void* dst, void* src) noexcept {
        D& s = *std::launder(static_cast<D*>(src));
        ::new (dst) D(std::move(s));
        s.~D();
      }};

  template <class D>
  static constexpr vtable heap_vtable{
      [](void* p) {
        D* d = *static_cast<D**>(p);
        struct deleter {
          D* d;
          ~deleter() { delete d; }
        } guard{d};
        (*d)();
      },
      [](void* p) noexcept { delete *static_cast<D**>(p); },
      [](void* dst, void* src) noexcept { *static_cast<D**>(dst) = *static_cast<D**>(src); }};

  alignas(std::max_align_t) unsigned char buf_[inline_bytes];
  const vtable* vt_ = nullptr;
};

}  // namespace admit::sim
