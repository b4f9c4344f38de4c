#include "gate/redis/sorted_set.hpp"

#include <algorithm>
#include <cmath>

#include "gate/admit_assert.hpp"

namespace admit::redis {
namespace {

// Redis order: score first, then member bytes. std::string_view compares
// through char_traits<char>, which compares as unsigned char, i.e. memcmp.
bool entry_before(double score_a, std::string_view member_a, double score_b,
                  std::string_view member_b) {
  if (score_a != score_b) return score_a < score_b;
  return member_a < member_b;
}

bool above_min(double score, score_bound min) {
  return min.exclusive ? score > min.value : score >= min.value;
}

bool below_max(double score, score_bound max) {
  return max.exclusive ? score < max.value : score <= max.value;
}

}  // namespace

std::optional<std::size_t> sorted_set::find(std::string_view member) const {
  if (indexed_) {
    const auto it = index_.find(member);
    if (it == index_.end()) return std::nullopt;
    return position_of(it->second, member);
  }
  // Tokens of one gate share their length and prefix and differ at the end:
  // test the last byte before comparing the rest.
  if (member.empty()) {
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].member.empty()) return i;
    return std::nullopt;
  }
  const char last = member.back();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::string& m = entries_[i].member;
    if (m.size() == member.size() && m.back() == last && std::string_view(m) == member) return i;
  }
  return std::nullopt;
}

void sorted_set::build_index() {
  index_.reserve(entries_.size());
  for (const entry& e : entries_) index_.emplace(e.member, e.score);
  indexed_ = true;
}

std::optional<double> sorted_set::score(std::string_view member) const {
  const auto at = find(member);
  if (!at) return std::nullopt;
  return entries_[*at].score;
}

std::size_t sorted_set::position_of(double score, std::string_view member) const {
  const auto it = std::lower_bound(
      entries_.begin(), entries_.end(), std::pair{score, member},
      [](const entry& e, const std::pair<double, std::string_view>& key) {
        return entry_before(e.score, e.member, key.first, key.second);
      });
  ADMIT_ASSERT(it != entries_.end(), "an indexed member is in the ordered entries");
  ADMIT_ASSERT(it->member == member, "the index and the ordered entries agree");
  return static_cast<std::size_t>(it - entries_.begin());
}

std::optional<std::size_t> sorted_set::rank(std::string_view member) const { return find(member); }

bool sorted_set::insert_or_assign(double score, std::string_view member) {
  ADMIT_ASSERT(!std::isnan(score), "Redis refuses NaN scores before they reach a set");
  if (score == 0.0) score = 0.0;  // -0 becomes 0
  const auto found = find(member);
  const bool is_new = !found;
  if (!is_new) {
    if (entries_[*found].score == score) return false;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(*found));
    if (indexed_) index_.find(member)->second = score;
  } else if (indexed_) {
    index_.emplace(std::string(member), score);
  }
  // Scores are timestamps or tickets that grow, so the common case appends.
  auto at = entries_.end();
  if (!entries_.empty() && !entry_before(entries_.back().score, entries_.back().member, score,
                                         member)) {
    at = std::lower_bound(entries_.begin(), entries_.end(), std::pair{score, member},
                          [](const entry& e, const std::pair<double, std::string_view>& key) {
                            return entry_before(e.score, e.member, key.first, key.second);
                          });
  }
  entries_.insert(at, entry{score, std::string(member)});
  if (!indexed_ && entries_.size() > linear_up_to) build_index();
  ADMIT_ASSERT(!indexed_ || entries_.size() == index_.size(), "every member is indexed once");
  return is_new;
}

bool sorted_set::erase(std::string_view member) {
  const auto found = find(member);
  if (!found) return false;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(*found));
  if (indexed_) index_.erase(index_.find(member));
  ADMIT_ASSERT(!indexed_ || entries_.size() == index_.size(), "every member is indexed once");
  return true;
}

std::pair<std::size_t, std::size_t> sorted_set::score_range(score_bound min,
                                                            score_bound max) const {
  const auto first = std::partition_point(entries_.begin(), entries_.end(),
                                          [&](const entry& e) { return !above_min(e.score, min); });
  const auto last = std::partition_point(first, entries_.end(),
                                         [&](const entry& e) { return below_max(e.score, max); });
  return {static_cast<std::size_t>(first - entries_.begin()),
          static_cast<std::size_t>(last - entries_.begin())};
}

std::size_t sorted_set::erase_score_range(score_bound min, score_bound max) {
  const auto [first, last] = score_range(min, max);
  erase_rank_range(first, last);
  return last - first;
}

void sorted_set::erase_rank_range(std::size_t first, std::size_t last) {
  ADMIT_ASSERT(first <= last, "a rank range runs forwards");
  ADMIT_ASSERT(last <= entries_.size(), "a rank range lies within the set");
  if (indexed_) {
    for (std::size_t i = first; i < last; ++i) {
      const auto erased = index_.erase(entries_[i].member);
      ADMIT_ASSERT(erased == 1, "every ordered entry is indexed");
    }
  }
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(first),
                 entries_.begin() + static_cast<std::ptrdiff_t>(last));
  ADMIT_ASSERT(!indexed_ || entries_.size() == index_.size(), "every member is indexed once");
}

}  // namespace admit::redis
