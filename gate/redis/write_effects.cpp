#include "gate/redis/write_effects.hpp"

#include "gate/admit_assert.hpp"
#include "gate/redis/replica.hpp"

namespace admit::redis {

void write_effects::add(std::span<const std::string_view> argv) {
  ADMIT_ASSERT(!argv.empty(), "a write command has a name");
  ADMIT_ASSERT(ends_.empty() || ends_.back() == words_.size(), "the last command ends where the words end");
  for (const std::string_view word : argv) words_.emplace_back(word);
  ends_.push_back(words_.size());
}

std::vector<std::string_view> write_effects::command(std::size_t i) const {
  ADMIT_ASSERT(i < ends_.size(), "a kept command");
  const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
  ADMIT_ASSERT(begin < ends_[i], "every kept command has at least its name");
  return {words_.begin() + static_cast<std::ptrdiff_t>(begin), words_.begin() + static_cast<std::ptrdiff_t>(ends_[i])};
}

void write_effects::apply_to(replica& to, std::int64_t server_now_us) const {
  std::vector<std::string_view> argv;
  std::size_t begin = 0;
  for (const std::size_t end : ends_) {
    ADMIT_ASSERT(begin < end && end <= words_.size(), "commands are non-empty and in order");
    argv.assign(words_.begin() + static_cast<std::ptrdiff_t>(begin), words_.begin() + static_cast<std::ptrdiff_t>(end));
    // A replica holding the primary's data answers as the primary did; the
    // follower's answers reach nobody (Redis's replicas do not reply to their primary).
    (void)to.execute(std::span<const std::string_view>(argv), server_now_us, nullptr);
    begin = end;
  }
  ADMIT_ASSERT(begin == words_.size(), "every word belongs to a command");
}

void write_effects::clear() noexcept {
  words_.clear();
  ends_.clear();
}

}  // namespace admit::redis
