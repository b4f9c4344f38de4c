// histogram: streaming latency percentiles in constant memory.
//
// Log-linear buckets: a value v (integer ns, >= 0) falls into the bucket of
// its highest set bit and the next `sub_bits` bits below it, so every bucket
// spans at most 1/2^sub_bits of its values (under 1.6% with 6 bits). A
// percentile is reported as the highest value of the bucket that holds it,
// capped at the exact maximum (so it never understates a latency); values
// below 2^sub_bits are exact.
// Everything is integer arithmetic: the same inputs give the same report on
// every compiler.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace admit::check {

class histogram {
 public:
  static constexpr int sub_bits = 6;
  static constexpr int sub_count = 1 << sub_bits;
  static constexpr int bucket_count = (64 - sub_bits + 1) * sub_count;

  void add(std::int64_t v) noexcept {
    if (v < 0) v = 0;
    ++counts_[index(static_cast<std::uint64_t>(v))];
    ++total_;
    if (v > max_) max_ = v;
  }

  std::uint64_t count() const noexcept { return total_; }

  // Non-empty buckets in value order, as (lowest value, highest value, count).
  struct bucket_view {
    std::int64_t low;
    std::int64_t high;
    std::uint64_t count;
  };
  std::vector<bucket_view> nonempty() const {
    std::vector<bucket_view> out;
    for (int i = 0; i < bucket_count; ++i) {
      if (counts_[i] == 0) continue;
      const std::uint64_t hi = i + 1 < bucket_count ? lower_bound(i + 1) - 1 : UINT64_MAX;
      out.push_back(bucket_view{static_cast<std::int64_t>(lower_bound(i)),
                                hi > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(hi),
                                counts_[i]});
    }
    return out;
  }
  std::int64_t max() const noexcept { return max_; }

  // The value at or below which `per_mille`/1000 of the samples lie.
  std::int64_t percentile(int per_mille) const noexcept {
    if (total_ == 0) return 0;
    // rank = ceil(total * q), at least 1.
    std::uint64_t rank = (total_ * static_cast<std::uint64_t>(per_mille) + 999) / 1000;
    if (rank == 0) rank = 1;
    std::uint64_t seen = 0;
    for (int i = 0; i < bucket_count; ++i) {
      seen += counts_[i];
      if (seen >= rank) {
        const std::uint64_t high = i + 1 < bucket_count ? lower_bound(i + 1) - 1 : UINT64_MAX;
        return high > static_cast<std::uint64_t>(max_) ? max_ : static_cast<std::int64_t>(high);
      }
    }
    return max_;
  }

 private:
  static int index(std::uint64_t v) noexcept {
    if (v < sub_count) return static_cast<int>(v);
    const int msb = 63 - std::countl_zero(v);
    const int shift = msb - sub_bits;
    const int group = shift + 1;
    const int sub = static_cast<int>((v >> shift) & (sub_count - 1));
    return group * sub_count + sub;
  }
  static std::uint64_t lower_bound(int i) noexcept {
    const int group = i / sub_count;
    const int sub = i % sub_count;
    if (group == 0) return static_cast<std::uint64_t>(sub);
    const int shift = group - 1;
    return (static_cast<std::uint64_t>(sub_count + sub)) << shift;
  }

  std::array<std::uint64_t, bucket_count> counts_{};
  std::uint64_t total_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace admit::check
