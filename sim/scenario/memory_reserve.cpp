#include "sim/scenario/memory_reserve.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <new>

namespace admit::scenario {

namespace {

// One process-wide block, mapped by install and unmapped by the handler, which alone write these. It is
// mapped rather than taken with malloc (which maps a block this large anyway): the same address space
// comes back when it is unmapped, and a leak checker that scans the heap at exit (LeakSanitizer) has 64 MiB
// less to read in every run of a sanitizer build.
void* reserve_block = nullptr;
std::size_t reserve_length = 0;

void release_block() noexcept {
  if (reserve_block == nullptr) return;
  ::munmap(reserve_block, reserve_length);
  reserve_block = nullptr;
  reserve_length = 0;
}

void on_allocation_failure() {
  release_block();
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
  if (reserve_block == nullptr && bytes > 0) {
    void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block != MAP_FAILED) {  // without it, a failed allocation throws at once: no worse than before
      reserve_block = block;
      reserve_length = bytes;
    }
  }
  std::set_new_handler(on_allocation_failure);
}

bool memory_reserve_held() noexcept { return reserve_block != nullptr; }

}  // namespace admit::scenario
