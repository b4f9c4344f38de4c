#include "sim/scenario/memory_reserve.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace admit::scenario {

namespace {

void* reserve_block = nullptr;  // one process-wide block; written only by install and the handler

void on_allocation_failure() {
  if (reserve_block != nullptr) {
    std::free(reserve_block);
    reserve_block = nullptr;
  }
  // Fail this allocation as operator new would; the room freed is for the
  // destructors that run while the exception unwinds.
  throw std::bad_alloc();
}

// Maps the stack `bytes` below the caller (memory_reserve.hpp): the lowest byte
// of a block on the stack is written, so the kernel grows the stack down to it
// once; the pages between stay unmapped until used, and the stack never shrinks.
[[gnu::noinline]] void grow_stack(std::size_t bytes) noexcept {
  volatile char* lowest = static_cast<volatile char*>(__builtin_alloca(bytes));
  lowest[0] = 0;
}

}  // namespace

void install_memory_reserve(std::size_t bytes) noexcept {
  static bool stack_grown = false;
  if (!stack_grown) {
    stack_grown = true;
    rlimit lim{};
    std::size_t room = memory_reserve_stack_bytes;
    if (::getrlimit(RLIMIT_STACK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
      room = std::min<std::size_t>(room, static_cast<std::size_t>(lim.rlim_cur) / 4);
    grow_stack(room);
  }
  if (reserve_block == nullptr) reserve_block = std::malloc(bytes);
  std::set_new_handler(on_allocation_failure);
}

bool memory_reserve_held() noexcept { return reserve_block != nullptr; }

}  // namespace admit::scenario
