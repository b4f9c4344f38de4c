// request: the state of one request of the FIFO world while it is in flight.
//
// A request is a client and a server-side handler (world.hpp). Its state is
// owned through req_ptr, a plain count (a run is single-threaded by design),
// and reused through the request_pool once the last reference goes. The
// handler's completion handlers name the state's memory as theirs
// (sim/kernel/handler_memory.hpp): the one operation in progress (the gate's
// waiter, then finish_worker's state) lives in its arena, and that
// operation's cancellation handler in its cancellation storage, the
// request's own cancellation signal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "gate/asio/async_fifo_gate.hpp"
#include "sim/kernel/handler_memory.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/fifo/sim_core.hpp"
#include "sim/world/fifo_process.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

using sim_gate = gate::async_fifo_gate<process_env, sim_core>;

class gate_slot;
class request_pool;
struct request_state;

// Out of line: the count's decrement is inlined everywhere, the reset is not.
[[gnu::noinline]] void recycle(request_state* r) noexcept;

using req_ptr = sim::intrusive_ptr<request_state, &recycle>;

struct request_state {
  static constexpr std::size_t cancel_bytes = 32;
  // Room for the gate's waiter, then finish_worker's state, with the world's handlers.
  static constexpr std::size_t arena_bytes = 128;
  using arena_type = sim::handler_arena<arena_bytes>;

  arrival a;
  std::uint64_t number = 0;
  gate_slot* gate = nullptr;
  vtime_ns service_ns = 0;
  vtime_ns granted_ns = 0;
  request_outcome out;
  sim::cancellation_storage<cancel_bytes> cancel;
  sim_gate::lease lease;  // held from the grant until the work has really ended
  // How far the server side got with it. The lifetime first and the group
  // [[no_unique_address]], so that `keep` takes the group's tail padding: the
  // flags stay one word that clear() resets with one store, as they were
  // before they were grouped (the FIFO world resets a state per request).
  struct handler_flags {
    std::uint64_t gen = 0;          // the process lifetime that took it
    bool accepted = false;          // the server process took its connection
    bool started = false;           // its handler has run its first step
    bool cancel_requested = false;  // it was cancelled (whether or not the handler had started)
    bool at_portal = false;         // its work runs at the portal (whatever became of its lifetime)
  };
  [[no_unique_address]] handler_flags handler;
  bool keep = false;  // a case refers to it: keep its outcome
  sim::ref_count refs;
  // The pool's bookkeeping (request_pool.hpp): whose state it is, and whether it is in the free list.
  struct pool_hook {
    request_pool* owner = nullptr;
    bool pooled = false;
  } pool;
  arena_type arena;

  // Back to the state of a new request, keeping its strings' storage for the
  // next one. Ends a lease still held (only at teardown); the arena is freed
  // by the allocator, not here.
  void clear() noexcept {
    { sim_gate::lease gone = std::move(lease); }  // its destructor keeps a failed release in the gate
    cancel.clear();
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
    handler = handler_flags{};
    keep = false;
  }
};

// The handlers' associated allocator and cancellation slot.
template <class T>
using request_allocator = sim::arena_allocator<T, request_state::arena_type>;
using request_slot = sim::inplace_cancellation_slot<request_state::cancel_bytes>;

}  // namespace admit::world::fifo_world
