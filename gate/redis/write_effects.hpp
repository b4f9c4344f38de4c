// write_effects: the write commands a primary applied, in the order it
// applied them, as its replicas apply them.
//
// Redis 7 replicates a script by its effects: the replicas never run the
// script, they apply the write commands it made (wrapped in MULTI/EXEC), so a
// replica ends with what the primary wrote even when the script read the
// clock, the run id or a random number. A command that answered an error
// changed nothing and is not kept; a read is not kept. The commands are kept
// flat (every word one after another, and where each command ends): one
// record costs a few allocations however many commands it holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace admit::redis {

class replica;

class write_effects {
 public:
  // Keeps one write command (its name first), copied.
  void add(std::span<const std::string_view> argv);
  [[nodiscard]] std::size_t commands() const noexcept { return ends_.size(); }
  [[nodiscard]] bool empty() const noexcept { return ends_.empty(); }
  // The i-th command's words (valid until the next add or clear).
  [[nodiscard]] std::vector<std::string_view> command(std::size_t i) const;
  // Applies every command, in order, to `to` at the primary's server time
  // `server_now_us`. A replica that holds what the primary held before these
  // commands answers each as the primary did; the answers are not kept.
  void apply_to(replica& to, std::int64_t server_now_us) const;
  void clear() noexcept;

 private:
  std::vector<std::string> words_;  // every command's words, one after another
  std::vector<std::size_t> ends_;   // ends_[i]: one past command i's last word in words_
};

}  // namespace admit::redis
