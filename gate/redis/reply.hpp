// admit::redis::reply: one Redis reply as RESP2 carries it.
//
// The replica answers every generic command with a `reply`, and the agreement
// test turns each reply of a real redis-server into the same type, so the two
// can be compared reply by reply with `==`. RESP2 has six shapes: nil, integer,
// bulk string, array, error and simple status; scores travel as bulk strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace admit::redis {

struct reply {
  enum class kind : std::uint8_t { nil, integer, bulk, array, error, status };

  kind type = kind::nil;
  std::int64_t integer = 0;     // kind::integer
  std::string text;             // kind::bulk, kind::error (without the leading '-'), kind::status
  std::vector<reply> elements;  // kind::array

  static reply nil();
  static reply from_integer(std::int64_t value);
  static reply bulk(std::string value);
  static reply array(std::vector<reply> values);
  static reply error(std::string message);
  static reply status(std::string message);

  [[nodiscard]] bool is_error() const noexcept { return type == kind::error; }

  friend bool operator==(const reply&, const reply&) = default;
};

// A one-line rendering in the style of redis-cli, for failure messages.
[[nodiscard]] std::string to_string(const reply& r);

}  // namespace admit::redis
