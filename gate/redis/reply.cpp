#include "gate/redis/reply.hpp"

#include <utility>

namespace admit::redis {

reply reply::nil() { return reply{}; }

reply reply::from_integer(std::int64_t value) {
  reply r;
  r.type = kind::integer;
  r.integer = value;
  return r;
}

reply reply::bulk(std::string value) {
  reply r;
  r.type = kind::bulk;
  r.text = std::move(value);
  return r;
}

reply reply::array(std::vector<reply> values) {
  reply r;
  r.type = kind::array;
  r.elements = std::move(values);
  return r;
}

reply reply::error(std::string message) {
  reply r;
  r.type = kind::error;
  r.text = std::move(message);
  return r;
}

reply reply::status(std::string message) {
  reply r;
  r.type = kind::status;
  r.text = std::move(message);
  return r;
}

std::string to_string(const reply& r) {
  switch (r.type) {
    case reply::kind::nil:
      return "(nil)";
    case reply::kind::integer:
      return "(integer) " + std::to_string(r.integer);
    case reply::kind::bulk:
      return "\"" + r.text + "\"";
    case reply::kind::error:
      return "(error) " + r.text;
    case reply::kind::status:
      return r.text;
    case reply::kind::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < r.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += to_string(r.elements[i]);
      }
      return out + "]";
    }
  }
  return "(unknown reply kind)";
}

}  // namespace admit::redis
