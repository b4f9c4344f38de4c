#include "sim/explore/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace admit::explore {

void parallel_for(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& task,
                  const std::function<bool()>& stop) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> quit{false};
  std::mutex m;
  std::exception_ptr failure;
  std::size_t failed_index = n;  // the least index whose task threw (n: none)
  auto work = [&] {
    for (;;) {
      if (quit) return;
      if (stop && stop()) {
        quit = true;
        return;
      }
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (i < failed_index) {
          failed_index = i;
          failure = std::current_exception();
        }
        quit = true;
      }
    }
  };
  const std::size_t count = std::min<std::size_t>(std::max(1u, jobs), n);
  if (count <= 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    threads.reserve(count);
    try {
      for (std::size_t t = 0; t < count; ++t) threads.emplace_back(work);
    } catch (const std::system_error&) {
      quit = true;
      for (auto& th : threads) th.join();
      throw;
    }
    for (auto& th : threads) th.join();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace admit::explore
