#include "gate/redis/protocol.hpp"

#include <charconv>
#include <cmath>
#include <iterator>
#include <string>

#include "gate/admit_assert.hpp"

namespace admit::redis {

namespace {

void append_int(std::string& out, std::int64_t v) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
}

std::optional<placeholder> placeholder_named(std::string_view name) {
  for (std::size_t i = 0; i < std::size(placeholder_names); ++i)
    if (name == placeholder_names[i]) return static_cast<placeholder>(i);
  return std::nullopt;
}

}  // namespace

std::optional<arg_template> arg_template::parse(std::string_view text, std::string& why) {
  arg_template t;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) t.pieces.push_back(piece{std::move(literal), std::nullopt});
    literal.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        literal += '}';
        ++i;
        continue;
      }
      why = "a '}' without its '{' (write \"}}\" for a literal brace)";
      return std::nullopt;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      literal += '{';
      ++i;
      continue;
    }
    const std::size_t close = text.find('}', i + 1);
    if (close == std::string_view::npos) {
      why = "a '{' without its '}' (write \"{{\" for a literal brace)";
      return std::nullopt;
    }
    const std::string_view name = text.substr(i + 1, close - i - 1);
    const std::optional<placeholder> p = placeholder_named(name);
    if (!p) {
      why = "an unknown placeholder {" + std::string(name) + "}; the placeholders are";
      for (const char* n : placeholder_names) why += std::string(" {") + n + "}";
      return std::nullopt;
    }
    flush();
    t.pieces.push_back(piece{{}, *p});
    i = close;
  }
  flush();
  return t;
}

std::string arg_template::text() const {
  std::string out;
  for (const piece& p : pieces) {
    if (p.value) {
      out += '{';
      out += placeholder_names[static_cast<std::size_t>(*p.value)];
      out += '}';
      continue;
    }
    for (const char c : p.literal) {
      out += c;
      if (c == '{' || c == '}') out += c;
    }
  }
  return out;
}

bool arg_template::uses(placeholder p) const noexcept {
  for (const piece& x : pieces)
    if (x.value == p) return true;
  return false;
}

void expand_into(const arg_template& t, const call_values& v, std::string& out) {
  for (const arg_template::piece& p : t.pieces) {
    if (!p.value) {
      out += p.literal;
      continue;
    }
    switch (*p.value) {
      case placeholder::key: out += v.key; break;
      case placeholder::token: out += v.token; break;
      case placeholder::limit: append_int(out, v.limit); break;
      case placeholder::lease_ms: append_int(out, v.lease_ms); break;
      case placeholder::now_ms: append_int(out, v.now_ms); break;
      case placeholder::expiry_ms: append_int(out, v.now_ms + v.lease_ms); break;
      case placeholder::queue_timeout_ms: append_int(out, v.queue_timeout_ms); break;
      case placeholder::permit: out += v.permit; break;
    }
  }
}

std::string expand(const arg_template& t, const call_values& v) {
  std::string out;
  expand_into(t, v, out);
  return out;
}

namespace {

script_reply read_whole(const reply& r, reply_rule rule) {
  switch (rule) {
    case reply_rule::equals_one:
      return script_reply{r.type == reply::kind::integer && r.integer == 1 ? 1 : 0, {}};
    case reply_rule::positive_integer:
      return script_reply{r.type == reply::kind::integer && r.integer >= 1 ? r.integer : 0, {}};
    case reply_rule::ok_status:
      return script_reply{r.type == reply::kind::status && r.text == "OK" ? 1 : 0, {}};
    case reply_rule::not_nil:
      return script_reply{r.type != reply::kind::nil ? 1 : 0, {}};
    case reply_rule::any:
      return script_reply{1, {}};
    case reply_rule::permit_id:
      return script_reply{(r.type == reply::kind::bulk || r.type == reply::kind::status) && !r.text.empty() ? 1 : 0, {}};
  }
  ADMIT_ASSERT(false, "every reply rule reads");
  return {};
}

// The part of `r` the rule reads: the reply, or its element; null when there is no such element.
const reply* read_part(const reply& r, const reply_read& how) {
  if (how.element == 0) return &r;
  if (r.type != reply::kind::array || r.elements.size() < how.element) return nullptr;
  return &r.elements[how.element - 1];
}

}  // namespace

script_reply read_reply(const reply& r, const reply_read& how) {
  if (r.is_error()) return script_reply{0, r.text.empty() ? std::string("ERR") : r.text};
  const reply* part = read_part(r, how);
  if (part == nullptr) return script_reply{};
  // An error inside an array (a script can return one as an element) is "no", not the call's error.
  if (part->is_error()) return script_reply{};
  return read_whole(*part, how.rule);
}

std::string_view permit_of(const reply& r, const reply_read& how) {
  if (how.rule != reply_rule::permit_id || r.is_error()) return {};
  const reply* part = read_part(r, how);
  if (part == nullptr || !read_whole(*part, how.rule).granted()) return {};
  return part->text;
}

std::string describe(const reply_read& how) {
  const std::string rule = reply_rule_names[static_cast<std::size_t>(how.rule)];
  if (how.element == 0) return rule;
  return "element " + std::to_string(how.element) + " is " + rule;
}

bool protocol_call::uses(placeholder p) const noexcept {
  for (const auto* list : {&command, &keys, &args})
    for (const arg_template& t : *list)
      if (t.uses(p)) return true;
  return false;
}

bool protocol::uses(placeholder p) const noexcept {
  for (const protocol_call& c : setup.calls)
    if (c.uses(p)) return true;
  return acquire.uses(p) || release.uses(p) || (renew && renew->uses(p)) || holders.key.uses(p);
}

const protocol_call& protocol::call(script_op op) const {
  switch (op) {
    case script_op::acquire: return acquire;
    case script_op::release: return release;
    case script_op::renew:
      ADMIT_ASSERT(renew.has_value(), "only a protocol with a renew call renews");
      return *renew;
  }
  ADMIT_ASSERT(false, "every operation has a call");
  return acquire;
}

std::optional<std::int64_t> renew_every_ns(const protocol& p, std::int64_t lease_ns) {
  if (!p.renew) return std::nullopt;
  if (p.client.renew_every_ns) return *p.client.renew_every_ns;
  if (p.client.renew_every_lease_fraction) {
    const double every = std::floor(static_cast<double>(lease_ns) * *p.client.renew_every_lease_fraction);
    return every < 1.0 ? std::int64_t{1} : static_cast<std::int64_t>(every);
  }
  return lease_ns / 3;  // the renewal variant's default
}

}  // namespace admit::redis
