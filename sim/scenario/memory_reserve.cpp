#include "sim/scenario/memory_reserve.hpp"

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

}  // namespace

void install_memory_reserve(std::size_t bytes) noexcept {
  if (reserve_block == nullptr) reserve_block = std::malloc(bytes);
  std::set_new_handler(on_allocation_failure);
}

bool memory_reserve_held() noexcept { return reserve_block != nullptr; }

}  // namespace admit::scenario
