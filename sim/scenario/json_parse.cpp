#include "sim/scenario/json_parse.hpp"

#include <cstring>
#include <memory>
#include <new>
#include <unordered_set>
#include <utility>
#include <vector>

namespace admit::scenario {

namespace {

using json = nlohmann::ordered_json;

std::string pointer_child(const std::string& path, std::string_view key) {
  std::string p = path;
  p += '/';
  for (char c : key) {
    if (c == '~') p += "~0";
    else if (c == '/') p += "~1";
    else p += c;
  }
  return p;
}

// Builds the document value by value. Every call does work bounded by the
// value's own size (plus amortised vector growth, which only moves), so the
// whole parse is linear in the text.
//
// An open container is built in its frame and placed into its parent when
// it closes. Why not in place, as nlohmann's own builder does: an
// ordered_json object is a vector of pair<const string, json>, whose move
// may throw (the const key is copied), so growing it copies every member's
// whole subtree: adding the fifth key to a scenario's top object copied its
// million requests. Members are gathered as pair<string, json>, which moves
// without throwing, and moved into the object once, at its end.
class dom_builder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  dom_builder(json& root, std::size_t max_depth) : root_(root), max_depth_(max_depth) {
    frames_.reserve(max_depth_ + 1);
  }
  dom_builder(const dom_builder&) = delete;
  dom_builder& operator=(const dom_builder&) = delete;
  // What is still open when the parse stops (an error, a bad_alloc) is taken
  // apart without allocating (dismantle_json).
  ~dom_builder() {
    for (frame& f : frames_) {
      for (json& e : f.array) dismantle_json(e);
      for (auto& m : f.members) dismantle_json(m.second);
    }
  }

  bool null() { return place(json(nullptr)); }
  bool boolean(bool v) { return place(json(v)); }
  bool number_integer(number_integer_t v) { return place(json(v)); }
  bool number_unsigned(number_unsigned_t v) { return place(json(v)); }
  bool number_float(number_float_t v, const string_t&) { return place(json(v)); }
  bool string(string_t& v) { return place(json(std::move(v))); }
  bool binary(binary_t& v) { return place(json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    frame& f = frames_.back();
    f.key = std::move(k);
    if (seen_before(f))
      throw scenario_error(path(), "expected each key once in an object, got \"" + printable_bytes(f.key) +
                                       "\" a second time");
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    const std::string msg = e.what();
    if (e.id >= 101 && e.id < 200) {
      const auto pos = msg.find("parse error");
      throw scenario_error("/", "expected valid JSON, got a " +
                                    printable_bytes(pos == std::string::npos ? msg : msg.substr(pos)));
    }
    if (e.id >= 401 && e.id < 500) {
      // A number too large for a double ("1e400"): the lexer stops at it.
      const auto pos = msg.find("number overflow");
      throw scenario_error(path(), "expected a number within range, got a " +
                                       printable_bytes(pos == std::string::npos ? msg : msg.substr(pos)));
    }
    throw scenario_error("/", "expected valid JSON, got " + printable_bytes(msg));
  }

  // The pointer of the value being read now.
  std::string path() const {
    std::string p;
    for (const frame& f : frames_)
      p = f.is_array ? pointer_child(p, std::to_string(f.array.size())) : pointer_child(p, f.key);
    return p.empty() ? "/" : p;
  }

 private:
  // Objects up to this many keys are checked for a duplicate by scanning
  // them (cheaper than a set for the small objects scenarios are made of);
  // a larger object gets a hash set of its keys, so that the check stays
  // O(1) per key however large the object grows.
  static constexpr std::size_t scan_keys_max = 16;

  struct frame {
    bool is_array = false;
    json::array_t array;                              // arrays: the elements so far
    std::vector<std::pair<std::string, json>> members;  // objects: the members so far, in order
    std::string key;                                  // objects: the key being read
    std::unique_ptr<std::unordered_set<std::string>> keys;  // objects past scan_keys_max keys
  };

  bool seen_before(frame& f) {
    if (!f.keys) {
      if (f.members.size() < scan_keys_max) {
        for (const auto& m : f.members)
          if (m.first == f.key) return true;
        return false;
      }
      f.keys = std::make_unique<std::unordered_set<std::string>>();
      f.keys->reserve(2 * scan_keys_max);
      for (const auto& m : f.members) f.keys->insert(m.first);
    }
    return !f.keys->insert(f.key).second;
  }

  // Places a whole value in the open container, or as the root.
  bool place(json&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return true;
    }
    frame& f = frames_.back();
    if (f.is_array)
      f.array.push_back(std::move(v));
    else
      f.members.emplace_back(f.key, std::move(v));  // the key was checked in key(): append, never search
    return true;
  }

  bool open(bool is_array) {
    if (frames_.size() >= max_depth_)
      throw scenario_error(path(), "expected values nested at most " + std::to_string(max_depth_) +
                                       " deep, got deeper nesting");
    frames_.emplace_back();
    frames_.back().is_array = is_array;
    return true;
  }

  bool close() {
    frame& f = frames_.back();
    json v(f.is_array ? json::value_t::array : json::value_t::object);
    if (f.is_array) {
      v.get_ref<json::array_t&>() = std::move(f.array);
    } else {
      json::object_t::Container& members = v.get_ref<json::object_t&>();
      members.reserve(f.members.size());  // may throw, before anything moved; nothing after it does
      for (auto& m : f.members) members.emplace_back(std::move(m.first), std::move(m.second));
      f.members.clear();
    }
    frames_.pop_back();
    try {
      return place(std::move(v));  // leaves v whole if the parent cannot grow
    } catch (...) {
      dismantle_json(v);
      throw;
    }
  }

  json& root_;
  std::size_t max_depth_;
  std::vector<frame> frames_;
};

}  // namespace

std::string printable_bytes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char hex[] = "0123456789ABCDEF";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
  return out;
}

namespace {

bool is_nonempty_container(const json& v) {
  return (v.is_array() || v.is_object()) && !v.empty();
}

// The last element of a non-empty array or object.
json& last_child(json& v) {
  if (v.is_array()) return v.get_ref<json::array_t&>().back();
  return v.get_ref<json::object_t&>().back().second;
}

}  // namespace

void dismantle_json(json& doc) noexcept {
  while (is_nonempty_container(doc)) {
    json* node = &doc;
    while (is_nonempty_container(last_child(*node))) node = &last_child(*node);
    // The last child is a scalar or an empty container: destroying it frees
    // and never allocates (pop_back does not reallocate).
    if (node->is_array())
      node->get_ref<json::array_t&>().pop_back();
    else
      static_cast<json::object_t::Container&>(node->get_ref<json::object_t&>()).pop_back();
  }
  doc = nullptr;  // destroys at most an empty container
}

json parse_json_text(std::string_view text, const json_parse_options& opts) {
  json doc;
  try {
    dom_builder builder(doc, opts.max_depth);
    json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
  } catch (const std::bad_alloc&) {
    dismantle_json(doc);
    throw scenario_error("/", "expected JSON text whose document fits in memory, got " + std::to_string(text.size()) +
                                  " bytes that ran out of memory while being read");
  } catch (...) {
    dismantle_json(doc);
    throw;
  }
  // The lexer ends the input at a NUL byte, so a document followed by a NUL
  // and anything at all parses. A NUL anywhere else is already refused (a raw
  // control character in a string, or an end of input where a value or a
  // bracket was due); one left here ended the parse early. JSON text never
  // holds a raw NUL.
  if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
    const auto offset = static_cast<std::size_t>(static_cast<const char*>(nul) - text.data());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw scenario_error("/", "expected valid JSON, got a NUL byte at line " + std::to_string(line) + ", column " +
                                  std::to_string(column) + " (JSON text holds none; what follows it would be ignored)");
  }
  return doc;
}

}  // namespace admit::scenario
