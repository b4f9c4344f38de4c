#include "gate/redis/hash_value.hpp"

#include <algorithm>

#include "gate/admit_assert.hpp"

namespace admit::redis {

std::vector<hash_value::field>::const_iterator hash_value::find(std::string_view name) const {
  return std::find_if(fields_.begin(), fields_.end(),
                      [&](const field& f) { return std::string_view(f.name) == name; });
}

const std::string* hash_value::get(std::string_view name) const {
  const auto it = find(name);
  return it == fields_.end() ? nullptr : &it->value;
}

bool hash_value::set(std::string_view name, std::string_view value) {
  const auto it = find(name);
  if (it != fields_.end()) {
    fields_[static_cast<std::size_t>(it - fields_.begin())].value = std::string(value);
    return false;
  }
  fields_.push_back(field{std::string(name), std::string(value)});
  return true;
}

bool hash_value::erase(std::string_view name) {
  const auto it = find(name);
  if (it == fields_.end()) return false;
  fields_.erase(it);
  ADMIT_ASSERT(find(name) == fields_.end(), "a field appears once");
  return true;
}

}  // namespace admit::redis
