// admit::redis::sorted_set: the value of one Redis sorted-set key.
//
// Redis orders members by score and, among equal scores, by member bytes
// (memcmp order, shorter first on a common prefix). That order is kept in a
// sorted vector of entries, which makes rank, index ranges and score ranges
// binary searches and keeps copies cheap (the world snapshots the replica for
// persistence and failover). A member is found by scanning the entries while
// the set holds at most 32 members (the lease sets hold a handful: a scan of
// short strings beats hashing, and a copy copies no hash table); past that a
// hash index answers "where is this member" without a scan. The index is only
// ever used for lookups, never iterated, so nothing unordered reaches an
// output.
//
// The lease protocol's sets are small and grow at the end (scores are
// timestamps or tickets that only increase), so inserting and reaping from
// the front cost a short move at most.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace admit::redis {

// One end of a score interval, as ZRANGEBYSCORE and ZREMRANGEBYSCORE take it:
// "1" is inclusive, "(1" exclusive, "-inf" and "+inf" unbounded.
struct score_bound {
  double value = 0.0;
  bool exclusive = false;

  friend bool operator==(const score_bound&, const score_bound&) = default;
};

class sorted_set {
 public:
  struct entry {
    double score = 0.0;
    std::string member;

    friend bool operator==(const entry&, const entry&) = default;
  };

  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

  // Entries in Redis order (score, then member bytes).
  [[nodiscard]] std::span<const entry> entries() const noexcept { return entries_; }

  [[nodiscard]] std::optional<double> score(std::string_view member) const;

  // 0-based position of `member` in Redis order.
  [[nodiscard]] std::optional<std::size_t> rank(std::string_view member) const;

  // Adds `member` or moves it to `score`. Returns true when the member is new.
  // A score of -0 is stored as 0 (what Redis shows for small sets).
  bool insert_or_assign(double score, std::string_view member);

  // Removes `member`; returns whether it was present.
  bool erase(std::string_view member);

  // Index range [first, last) of the entries whose score lies within [min, max].
  [[nodiscard]] std::pair<std::size_t, std::size_t> score_range(score_bound min,
                                                                score_bound max) const;

  // Removes the entries whose score lies within [min, max]; returns how many.
  std::size_t erase_score_range(score_bound min, score_bound max);

  // Removes the entries at positions [first, last) in Redis order.
  void erase_rank_range(std::size_t first, std::size_t last);

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };

  // Position of the entry (score, member), which must be present.
  [[nodiscard]] std::size_t position_of(double score, std::string_view member) const;
  // The position of a member: a scan of the entries while the set is small,
  // the index once it has grown past linear_up_to members.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view member) const;
  void build_index();

  static constexpr std::size_t linear_up_to = 32;

  std::vector<entry> entries_;
  bool indexed_ = false;  // index_ holds every member (kept once built)
  std::unordered_map<std::string, double, string_hash, std::equal_to<>> index_;
};

}  // namespace admit::redis
