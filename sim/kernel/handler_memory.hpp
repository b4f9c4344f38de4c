// handler_memory: what an actor written as a chain of completion handlers
// needs so that no step of it allocates.
//
// Model. Such an actor (the FIFO world's request handler: docs/architecture.md,
// "The request handler: callbacks, not a coroutine") owns one state object
// for its whole life, and at any moment waits on at most one asynchronous
// operation. Each handler of the chain holds a counted reference to the state
// and names the state's memory as its associated memory:
//  * handler_arena: room in the state for the one operation in progress,
//    handed out through arena_allocator, the handlers' associated allocator
//    (Asio's ProtoAllocator). An operation that does not fit, or a second one
//    while the first still lives, goes to the heap: the arena is never handed
//    out twice.
//  * cancellation_storage and inplace_cancellation_slot: the one cancellation
//    handler of the operation in progress, kept in the state. The slot
//    satisfies Asio's CancellationSlot requirements (emplace, assign, clear,
//    is_connected, has_handler); unlike asio::cancellation_slot it never
//    allocates, where Asio's frees its handler's memory at every clear().
//  * ref_count and intrusive_ptr: a plain count inside the state and the
//    pointer that holds it, with a recycle hook called when the last
//    reference goes, so that states are reused rather than freed.
// Single-threaded: a run of the simulator is, by design, so the count is not
// atomic. The memory of an operation lives as long as the state, and an
// operation holds its handler, hence a reference to its state.
//
// Assertions (ADMIT_ASSERT, on in every build): the arena's block is given
// back once, with the size it was taken with; a count never goes below zero.
// A cancellation handler that does not fit its storage does not compile.
#pragma once

#include <boost/asio/cancellation_type.hpp>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "gate/admit_assert.hpp"

namespace admit::sim {

// Room for one block of at most Bytes bytes (aligned as std::max_align_t).
template <std::size_t Bytes>
class handler_arena {
 public:
  static constexpr std::size_t capacity_bytes = Bytes;

  handler_arena() noexcept = default;
  handler_arena(const handler_arena&) = delete;
  handler_arena& operator=(const handler_arena&) = delete;

  // The arena for a block of `bytes` aligned to `align`, or nullptr when it
  // does not fit or is already handed out (the caller then takes the heap).
  void* take(std::size_t bytes, std::size_t align) noexcept {
    if (taken_bytes_ != 0 || bytes == 0 || bytes > Bytes || align > alignof(std::max_align_t)) return nullptr;
    taken_bytes_ = bytes;
    return buf_;
  }
  bool owns(const void* p) const noexcept { return p == static_cast<const void*>(buf_); }
  // Gives the block back: `p` must be the arena, handed out and not yet
  // given back, and `bytes` the size it was taken with.
  void give_back(void* p, std::size_t bytes) {
    ADMIT_ASSERT(owns(p), "only the arena's own block is given back to it");
    ADMIT_ASSERT(taken_bytes_ != 0, "the arena's block is given back once per time it was handed out");
    ADMIT_ASSERT(bytes == taken_bytes_, "the arena's block is given back with the size it was taken with");
    taken_bytes_ = 0;
  }
  bool in_use() const noexcept { return taken_bytes_ != 0; }

 private:
  alignas(std::max_align_t) unsigned char buf_[Bytes];
  std::size_t taken_bytes_ = 0;  // 0: free
};

// An allocator (Asio's ProtoAllocator, std's Allocator) over one arena.
template <class T, class Arena>
class arena_allocator {
 public:
  using value_type = T;

  explicit arena_allocator(Arena& a) noexcept : arena_(&a) {}
  template <class U>
  arena_allocator(const arena_allocator<U, Arena>& o) noexcept : arena_(o.arena()) {}

  T* allocate(std::size_t n) {
    if (void* p = arena_->take(n * sizeof(T), alignof(T))) return static_cast<T*>(p);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  // noexcept as the Allocator requirements ask: an arena given back wrongly
  // (a bookkeeping bug, never an input) ends the process with the reason.
  void deallocate(T* p, std::size_t n) noexcept {
    if (arena_->owns(p)) arena_->give_back(p, n * sizeof(T));
    else ::operator delete(p);
  }
  Arena* arena() const noexcept { return arena_; }

  template <class U>
  friend bool operator==(const arena_allocator& a, const arena_allocator<U, Arena>& b) noexcept {
    return a.arena_ == b.arena();
  }
  template <class U>
  friend bool operator!=(const arena_allocator& a, const arena_allocator<U, Arena>& b) noexcept {
    return a.arena_ != b.arena();
  }

 private:
  Arena* arena_;
};

// The one cancellation handler of an operation in progress, in place: a
// buffer of Bytes bytes and the two functions that call and destroy what it
// holds.
template <std::size_t Bytes>
class cancellation_storage {
 public:
  static constexpr std::size_t capacity_bytes = Bytes;

  cancellation_storage() noexcept = default;
  cancellation_storage(const cancellation_storage&) = delete;
  cancellation_storage& operator=(const cancellation_storage&) = delete;
  ~cancellation_storage() { clear(); }

  template <class H, class... Args>
  H& emplace(Args&&... args) {
    static_assert(sizeof(H) <= Bytes, "a cancellation handler bigger than its cancellation_storage");
    static_assert(alignof(H) <= alignof(std::max_align_t), "a cancellation handler aligned beyond max_align_t");
    clear();
    H* h = ::new (static_cast<void*>(buf_)) H(std::forward<Args>(args)...);
    call_ = [](void* p, boost::asio::cancellation_type_t type) { (*static_cast<H*>(p))(type); };
    destroy_ = [](void* p) noexcept { static_cast<H*>(p)->~H(); };
    return *h;
  }
  void clear() noexcept {
    if (destroy_ != nullptr) {
      auto destroy = std::exchange(destroy_, nullptr);
      call_ = nullptr;
      destroy(buf_);
    }
  }
  // As cancellation_signal::emit: calls the handler, if any (which may clear
  // itself from inside the call, as an operation it cancels completes).
  void emit(boost::asio::cancellation_type_t type) {
    if (call_ != nullptr) call_(buf_, type);
  }
  bool has_handler() const noexcept { return call_ != nullptr; }

 private:
  alignas(std::max_align_t) unsigned char buf_[Bytes];
  void (*call_)(void*, boost::asio::cancellation_type_t) = nullptr;
  void (*destroy_)(void*) noexcept = nullptr;
};

// A slot (Asio's CancellationSlot requirements) over one cancellation_storage.
template <std::size_t Bytes>
class inplace_cancellation_slot {
 public:
  explicit inplace_cancellation_slot(cancellation_storage<Bytes>* s) noexcept : s_(s) {}

  template <class H, class... Args>
  H& emplace(Args&&... args) {
    ADMIT_ASSERT(s_ != nullptr, "a handler is emplaced only into a connected slot");
    return s_->template emplace<H>(std::forward<Args>(args)...);
  }
  template <class H>
  std::decay_t<H>& assign(H&& h) {
    return emplace<std::decay_t<H>>(std::forward<H>(h));
  }
  void clear() noexcept {
    if (s_ != nullptr) s_->clear();
  }
  bool is_connected() const noexcept { return s_ != nullptr; }
  bool has_handler() const noexcept { return s_ != nullptr && s_->has_handler(); }

  friend bool operator==(const inplace_cancellation_slot& a, const inplace_cancellation_slot& b) noexcept {
    return a.s_ == b.s_;
  }

 private:
  cancellation_storage<Bytes>* s_;
};

// A plain reference count, kept inside the object it counts.
class ref_count {
 public:
  void add() noexcept { ++n_; }
  // Drops one reference; true when it was the last.
  bool drop() {
    ADMIT_ASSERT(n_ > 0, "a reference count never goes below zero");
    return --n_ == 0;
  }
  std::uint32_t count() const noexcept { return n_; }

 private:
  std::uint32_t n_ = 0;
};

// A counted reference to a T with a public `ref_count refs`; `Recycle(p)`
// runs when the last reference to `p` goes (it reuses or frees `p`).
template <class T, void (*Recycle)(T*) noexcept>
class intrusive_ptr {
 public:
  intrusive_ptr() noexcept = default;
  explicit intrusive_ptr(T* p) noexcept : p_(p) { p_->refs.add(); }
  intrusive_ptr(const intrusive_ptr& o) noexcept : p_(o.p_) {
    if (p_ != nullptr) p_->refs.add();
  }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  intrusive_ptr& operator=(intrusive_ptr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  // Most pointers a handler chain destroys were moved from: only their test
  // is inline, the drop itself is not (inlined whole, the destructor is too
  // big for the compiler to inline at its many call sites).
  ~intrusive_ptr() {
    if (p_ != nullptr) drop(p_);
  }
  T* operator->() const noexcept { return p_; }
  T* get() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  // A count below zero here means a reference was dropped twice: drop()'s
  // assertion then ends the process (a destructor cannot throw).
  [[gnu::noinline]] static void drop(T* p) noexcept {
    if (p->refs.drop()) Recycle(p);
  }

  T* p_ = nullptr;
};

}  // namespace admit::sim
