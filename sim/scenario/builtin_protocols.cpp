#include "sim/scenario/builtin_protocols.hpp"

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gate/admit_assert.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "sim/scenario/protocol_loader.hpp"

namespace admit::scenario {

namespace {

// A compiled-in file by the last part of its path ("../lua/release.lua" reads release.lua).
std::string compiled_in(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
  const bool json = name.size() > 5 && name.substr(name.size() - 5) == ".json";
  for (const redis::embedded_lua& e : json ? redis::embedded_protocol_files() : redis::embedded_lua_files())
    if (e.file == name) return std::string(e.source);
  throw std::runtime_error("no compiled-in file " + std::string(name));
}

protocol_ref read_builtin(redis::variant v) {
  const std::string name = std::string(redis::to_string(v));
  nlohmann::ordered_json doc = {{"gate", {{"protocol", name + ".json"}}}};
  inline_protocol_files(doc, "gate/redis/protocols", compiled_in);
  protocol_ref ref;
  ref.proto = std::make_shared<const redis::protocol>(read_protocol(doc["gate"]["protocol"], "/gate/protocol"));
  ref.source_json = doc["gate"]["protocol"].dump();
  ADMIT_ASSERT(ref.proto->name == name, "a built-in variant's protocol file bears the variant's name");
  return ref;
}

}  // namespace

const protocol_ref& builtin_protocol(redis::variant v) {
  static const std::array<protocol_ref, redis::all_variants.size()> table = [] {
    std::array<protocol_ref, redis::all_variants.size()> t;
    for (std::size_t i = 0; i < redis::all_variants.size(); ++i) t[i] = read_builtin(static_cast<redis::variant>(i));
    return t;
  }();
  ADMIT_ASSERT(static_cast<std::size_t>(v) < redis::all_variants.size(), "a variant of the table");
  return table[static_cast<std::size_t>(v)];
}

}  // namespace admit::scenario
