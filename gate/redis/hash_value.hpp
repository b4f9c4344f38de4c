// admit::redis::hash_value: the value of one Redis hash key.
//
// Fields keep the order they were first set in, which is the order in which
// Redis 7.0 answers HGETALL, HKEYS and HVALS for a small hash (listpack
// encoding: at most 128 fields, every field and value at most 64 bytes). Setting
// an existing field changes its value in place; deleting one closes the gap;
// a field set again after deletion goes to the end. Past those limits Redis
// converts the hash to a hash table whose iteration order depends on a
// per-process seed; the replica keeps insertion order there too (Redis's
// order cannot be reproduced, see docs/redis-replica.md).
//
// Lookups scan the fields, as Redis does in a listpack: the hashes of lease
// scripts hold a handful of fields, and a copy (a snapshot) copies no index.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace admit::redis {

class hash_value {
 public:
  struct field {
    std::string name;
    std::string value;

    friend bool operator==(const field&, const field&) = default;
  };

  [[nodiscard]] std::size_t size() const noexcept { return fields_.size(); }
  [[nodiscard]] bool empty() const noexcept { return fields_.empty(); }

  // Fields in insertion order (HGETALL's order for a small hash).
  [[nodiscard]] std::span<const field> fields() const noexcept { return fields_; }

  // The field's value, nullptr when absent. Valid until the next change.
  [[nodiscard]] const std::string* get(std::string_view name) const;

  // Sets `name` to `value`; returns true when the field is new (appended).
  bool set(std::string_view name, std::string_view value);

  // Removes `name`; returns whether it was present.
  bool erase(std::string_view name);

 private:
  [[nodiscard]] std::vector<field>::const_iterator find(std::string_view name) const;

  std::vector<field> fields_;
};

}  // namespace admit::redis
