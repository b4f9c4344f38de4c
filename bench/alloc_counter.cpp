#include "bench/alloc_counter.hpp"

#include <cerrno>
#include <cstddef>

namespace {
thread_local std::uint64_t allocations = 0;
}  // namespace

std::uint64_t admit::bench::allocations_on_this_thread() noexcept { return allocations; }

#ifdef ADMITSIM_NO_ALLOC_COUNTER
bool admit::bench::counting_allocations() noexcept { return false; }
#else
bool admit::bench::counting_allocations() noexcept { return true; }

// glibc's implementations, exported for exactly this use (interposition).
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);

void* malloc(std::size_t size) noexcept {
  ++allocations;
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  ++allocations;
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) noexcept {
  ++allocations;
  return __libc_realloc(p, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  ++allocations;
  return __libc_memalign(alignment, size);
}
void* memalign(std::size_t alignment, std::size_t size) noexcept {
  ++allocations;
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  ++allocations;
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}
#endif  // ADMITSIM_NO_ALLOC_COUNTER
