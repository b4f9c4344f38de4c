// alloc_counter: how many heap allocations this thread has made.
//
// Linked into a benchmark binary, alloc_counter.cpp interposes the C
// allocation entry points (malloc, calloc, realloc, aligned_alloc,
// posix_memalign, memalign) and counts calls per thread before forwarding to
// glibc's own implementation (__libc_*). Everything that allocates goes
// through one of them: operator new, std::allocator, Asio's aligned_new for
// coroutine frames. glibc only; the count is a per-thread integer, so it adds
// no synchronisation to what is measured. Frees are not counted. Sanitizer
// builds (ADMITSIM_SANITIZE) bring their own allocator, so there the
// counter is compiled out and counting_allocations() is false.
#pragma once

#include <cstdint>

namespace admit::bench {

bool counting_allocations() noexcept;
std::uint64_t allocations_on_this_thread() noexcept;

}  // namespace admit::bench
