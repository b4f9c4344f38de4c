// ticket_index: an open-addressing hash map from a 64-bit ticket id to a
// 32-bit value, used by the FIFO gate to find a waiting or handed-over ticket.
//
// Why not std::unordered_map: it allocates one node per insert, and the gate
// must not allocate per operation once it is warm. This table keeps every slot
// in one vector (linear probing, backward-shift deletion, so no tombstones
// pile up). The vector only grows, doubling when half full, so after the gate
// has seen its peak number of live tickets it never allocates again.
//
// It is a lookup structure only. Nothing iterates it, so the slot layout (which
// depends on the hash) can never leak into output order or a decision.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gate/admit_assert.hpp"

namespace admit::fifo {

class ticket_index {
 public:
  using key_type = std::uint64_t;
  using value_type = std::uint32_t;
  // The one value a slot may not hold: it marks the slot empty.
  static constexpr value_type empty_value = 0xFFFF'FFFFu;

  ticket_index() : slots_(min_slots), mask_(min_slots - 1) {}

  std::size_t size() const noexcept { return size_; }
  std::size_t slot_count() const noexcept { return slots_.size(); }

  const value_type* find(key_type key) const noexcept {
    const std::size_t i = find_slot(key);
    return i == npos ? nullptr : &slots_[i].value;
  }
  value_type* find(key_type key) noexcept {
    const std::size_t i = find_slot(key);
    return i == npos ? nullptr : &slots_[i].value;
  }

  // The key must be absent: a ticket is indexed at most once at a time.
  void insert(key_type key, value_type value) {
    ADMIT_ASSERT(value != empty_value, "the empty marker cannot be stored as a value");
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(key);
    while (slots_[i].value != empty_value) {
      ADMIT_ASSERT(slots_[i].key != key, "a ticket id was indexed twice");
      i = (i + 1) & mask_;
    }
    slots_[i] = slot{key, value};
    ++size_;
  }

  // Returns false when the key was absent.
  bool erase(key_type key) noexcept {
    std::size_t hole = find_slot(key);
    if (hole == npos) return false;
    // Backward shift: walk the probe run after the hole and pull back every
    // entry whose home does not lie cyclically in (hole, j]; such an entry
    // would become unreachable if the hole stayed empty.
    std::size_t j = hole;
    for (;;) {
      j = (j + 1) & mask_;
      if (slots_[j].value == empty_value) break;
      const std::size_t k = home(slots_[j].key);
      const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = empty_value;
    --size_;
    return true;
  }

 private:
  struct slot {
    key_type key = 0;
    value_type value = empty_value;
  };

  static constexpr std::size_t min_slots = 16;
  static constexpr std::size_t npos = ~std::size_t{0};

  // splitmix64's finaliser: caller-chosen ids are often sequential, so the
  // low bits must be mixed before masking.
  static std::uint64_t mix(std::uint64_t z) noexcept {
    z += 0x9E37'79B9'7F4A'7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58'476D'1CE4'E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D0'49BB'1331'11EBull;
    return z ^ (z >> 31);
  }
  std::size_t home(key_type key) const noexcept {
    return static_cast<std::size_t>(mix(key)) & mask_;
  }

  std::size_t find_slot(key_type key) const noexcept {
    if (size_ == 0) return npos;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.value == empty_value) return npos;
      if (s.key == key) return i;
    }
  }

  void grow() {
    std::vector<slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const slot& s : old) {
      if (s.value == empty_value) continue;
      std::size_t i = home(s.key);
      while (slots_[i].value != empty_value) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<slot> slots_;
  std::size_t mask_;
  std::size_t size_ = 0;
};

}  // namespace admit::fifo
