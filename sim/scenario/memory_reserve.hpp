// memory_reserve: address space held back for tearing down after a
// std::bad_alloc.
//
// Why: some destructors allocate. nlohmann's json destructor first moves a
// container's elements to a heap-allocated stack (16 bytes an element), and
// a destructor that throws while a bad_alloc unwinds ends the process in
// std::terminate (SIGABRT). The project's own teardown paths allocate
// nothing (dismantle_json, the worlds' recycling), but every json value
// built from a scenario or a report would need the same care. This reserve
// makes the first failed allocation free a block taken at start-up before
// throwing, so that what unwinds after it has that much room to allocate in.
//
// Under `ulimit -v` (RLIMIT_AS), where std::bad_alloc happens, the block is
// address space that counts against the limit and is returned by munmap();
// untouched, it costs no resident memory.
//
// The main thread's stack is grown at start-up too (memory_reserve_stack_bytes
// below where main runs; one page touched, the rest address space only): a
// stack grows on demand, and under RLIMIT_AS growing it needs address space
// as well. An allocation can fail outside operator new, where the handler
// never runs and the block is not freed (a library calling malloc itself);
// the unwinder, which runs deeper than the run did, then found no page for
// its stack and the process died of SIGSEGV, depending on how deep the run's
// frames went. Boost.Asio's handler memory, which came from
// std::aligned_alloc, is built to come from operator new (CMakeLists.txt,
// admitsim_asio), so its failures free the block too.
#pragma once

#include <cstddef>

namespace admit::scenario {

inline constexpr std::size_t memory_reserve_bytes = std::size_t{64} << 20;
// At most a quarter of the stack limit (ulimit -s), which is 8 MiB by default.
inline constexpr std::size_t memory_reserve_stack_bytes = std::size_t{1} << 20;

// Takes the block (if it can), grows the stack and installs the new-handler.
// Call once, first thing in main. The handler frees the block at the first failure and throws
// std::bad_alloc as operator new would have; later failures throw at once.
void install_memory_reserve(std::size_t bytes = memory_reserve_bytes) noexcept;

// Whether the reserve is still held (false once a failure has used it).
bool memory_reserve_held() noexcept;

}  // namespace admit::scenario
