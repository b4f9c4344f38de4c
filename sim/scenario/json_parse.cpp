#include "sim/scenario/json_parse.hpp"

#include <cstring>
#include <memory>
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
// value's own size (plus amortised vector growth), so the whole parse is
// linear in the text.
class dom_builder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  dom_builder(json& root, std::size_t max_depth) : root_(root), max_depth_(max_depth) {}

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) { return scalar(json(v)); }
  bool string(string_t& v) { return scalar(json(std::move(v))); }
  bool binary(binary_t& v) { return scalar(json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
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
    for (const frame& f : frames_) p = f.is_array ? pointer_child(p, std::to_string(f.index)) : pointer_child(p, f.key);
    return p.empty() ? "/" : p;
  }

 private:
  // Objects up to this many keys are checked for a duplicate by scanning
  // them (cheaper than a set for the small objects scenarios are made of);
  // a larger object gets a hash set of its keys, so that the check stays
  // O(1) per key however large the object grows.
  static constexpr std::size_t scan_keys_max = 16;

  struct frame {
    json* value = nullptr;  // the open array or object, inside its parent (stable while it is open)
    bool is_array = false;
    std::size_t index = 0;  // arrays: the element being read
    std::string key;        // objects: the key being read
    std::unique_ptr<std::unordered_set<std::string>> keys;  // objects past scan_keys_max keys
  };

  bool seen_before(frame& f) {
    const json::object_t& obj = f.value->get_ref<const json::object_t&>();
    if (!f.keys) {
      if (obj.size() < scan_keys_max) {
        for (const auto& kv : obj)
          if (kv.first == f.key) return true;
        return false;
      }
      f.keys = std::make_unique<std::unordered_set<std::string>>();
      f.keys->reserve(2 * scan_keys_max);
      for (const auto& kv : obj) f.keys->insert(kv.first);
    }
    return !f.keys->insert(f.key).second;
  }

  // Places v in the open container (or as the root); returns where it went.
  json* place(json&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    frame& f = frames_.back();
    if (f.is_array) {
      json::array_t& arr = f.value->get_ref<json::array_t&>();
      arr.push_back(std::move(v));
      return &arr.back();
    }
    // The key was checked in key(): append, never search the object.
    json::object_t& obj = f.value->get_ref<json::object_t&>();
    static_cast<json::object_t::Container&>(obj).emplace_back(f.key, std::move(v));
    return &obj.back().second;
  }

  void next_element() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  bool scalar(json&& v) {
    place(std::move(v));
    next_element();
    return true;
  }

  bool open(json::value_t t) {
    if (frames_.size() >= max_depth_)
      throw scenario_error(path(), "expected values nested at most " + std::to_string(max_depth_) +
                                       " deep, got deeper nesting");
    json* v = place(json(t));
    frames_.push_back(frame{v, t == json::value_t::array, 0, {}, nullptr});
    return true;
  }

  bool close() {
    frames_.pop_back();
    next_element();
    return true;
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

json parse_json_text(std::string_view text, const json_parse_options& opts) {
  json doc;
  dom_builder builder(doc, opts.max_depth);
  json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true,
                  /*ignore_comments=*/false);
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
