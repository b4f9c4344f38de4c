#include "sim/world/lease/process_messages.hpp"

#include <limits>

#include <utility>

#include "gate/admit_assert.hpp"

namespace admit::world::lease::msg {

namespace {

using json = nlohmann::ordered_json;
using codec::codec_error;

const char* op_name(gate::client_core::op_kind k) {
  switch (k) {
    case gate::client_core::op_kind::acquire: return "acquire";
    case gate::client_core::op_kind::release: return "release";
    case gate::client_core::op_kind::renew: return "renew";
    case gate::client_core::op_kind::setup: return "setup";
  }
  return "acquire";
}

// Whether `s` is UTF-8 text as JSON can carry it (the shortest encodings, no surrogates).
bool utf8_text(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1FU;
    } else if ((c & 0xF0U) == 0xE0U) {
      n = 2;
      cp = c & 0x0FU;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07U;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0U) != 0x80U) return false;
      cp = (cp << 6) | (d & 0x3FU);
    }
    if (n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return false;
    if (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::string hex_of(const std::string& s) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    out += digits[c >> 4];
    out += digits[c & 0xF];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

json bytes_json(const std::string& s) {
  if (utf8_text(s)) return json(s);
  json o = json::object();
  o["hex"] = hex_of(s);
  return o;
}

std::string read_word(const json& v, const std::string& path) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_object()) throw codec_error(path, "expected a string or {\"hex\": \"...\"}");
  codec::expect_only_keys(v, path, {"hex"});
  const std::string h = codec::read_string(v, path, "hex");
  if (h.size() % 2 != 0) throw codec_error(path + "/hex", "expected an even number of hex digits");
  std::string out;
  out.reserve(h.size() / 2);
  for (std::size_t i = 0; i < h.size(); i += 2) {
    const int hi = hex_digit(h[i]);
    const int lo = hex_digit(h[i + 1]);
    if (hi < 0 || lo < 0) throw codec_error(path + "/hex", "expected hex digits (0-9, a-f)");
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

void add_clock(json& o, std::int64_t now_ns, std::int64_t wall_ms) {
  o["now"] = now_ns;
  o["wall_ms"] = wall_ms;
}

}  // namespace

json reply_json(const redis::reply& r) {
  json o = json::object();
  switch (r.type) {
    case redis::reply::kind::nil: o["nil"] = true; break;
    case redis::reply::kind::integer: o["int"] = r.integer; break;
    case redis::reply::kind::bulk: o["bulk"] = bytes_json(r.text); break;
    case redis::reply::kind::status: o["status"] = bytes_json(r.text); break;
    case redis::reply::kind::error: o["error"] = bytes_json(r.text); break;
    case redis::reply::kind::array: {
      json a = json::array();
      for (const redis::reply& e : r.elements) a.push_back(reply_json(e));
      o["array"] = std::move(a);
      break;
    }
  }
  return o;
}

std::int64_t ahead::last_until(std::int64_t wall_base_ns) noexcept {
  return std::numeric_limits<std::int64_t>::max() - wall_base_ns;
}

json ahead::to_json() const {
  ADMIT_ASSERT(wall_base_ns >= 0 && until_ns <= last_until(wall_base_ns),
               "a promised wall clock reads (t + base) / 1e6 without overflow, with a base not below 0");
  json o = json::object();
  if (until_ns != last_until(wall_base_ns)) o["until"] = until_ns;
  o["wall_base"] = wall_base_ns;
  return o;
}

json start::to_json() const {
  ADMIT_ASSERT(cfg != nullptr, "a start carries the client's configuration");
  json o = json::object();
  o["type"] = "start";
  o["protocol"] = protocol_version;
  o["role"] = "lease_client";
  o["seed"] = seed;
  o["worker"] = worker;
  o["generation"] = generation;
  add_clock(o, now_ns, wall_ms);
  json c = json::object();
  c["key"] = cfg->key;
  c["limit"] = cfg->limit;
  c["lease_ms"] = cfg->lease_ms;
  c["acquire_timeout_ms"] = cfg->acquire_timeout_ns / 1'000'000;
  json b = json::object();
  if (cfg->backoff.exponential) {
    b["kind"] = "exponential";
    b["base_ms"] = cfg->backoff.base_ns / 1'000'000;
    b["max_ms"] = cfg->backoff.max_ns / 1'000'000;
    b["full_jitter"] = cfg->backoff.full_jitter;
  } else {
    b["kind"] = "fixed";
    b["delay_ms"] = cfg->backoff.delay_ns / 1'000'000;
  }
  c["backoff"] = std::move(b);
  o["settings"] = std::move(c);
  return o;
}

json op_start::to_json() const {
  json o = json::object();
  o["type"] = op_name(kind);
  o["op"] = op;
  o["token"] = token;
  add_clock(o, now_ns, wall_ms);
  if (offer != nullptr) o["ahead"] = offer->to_json();
  return o;
}

json op_reply::to_json() const {
  ADMIT_ASSERT(lost || answer != nullptr, "a reply that came carries it");
  json o = json::object();
  o["type"] = lost ? "lost" : "reply";
  o["op"] = op;
  add_clock(o, now_ns, wall_ms);
  if (!lost) o["reply"] = reply_json(*answer);
  if (offer != nullptr) o["ahead"] = offer->to_json();
  return o;
}

json op_woke::to_json() const {
  json o = json::object();
  o["type"] = "woke";
  o["op"] = op;
  add_clock(o, now_ns, wall_ms);
  if (offer != nullptr) o["ahead"] = offer->to_json();
  return o;
}

json stop::to_json() const {
  json o = json::object();
  o["type"] = "stop";
  o["now"] = now_ns;
  return o;
}

step read_step(const json& a, gate::client_core::op_kind kind, std::int64_t now_ns, const ahead* offered) {
  if (!a.is_object()) throw codec_error("", "expected an object");
  step s;
  if (a.contains("command")) {
    codec::expect_only_keys(a, "", {"command", "timeout_at"});
    if (a.contains("timeout_at")) {
      s.timeout_at_ns = codec::read_i64(a, "", "timeout_at");
      if (*s.timeout_at_ns < now_ns)
        throw codec_error("/timeout_at", "expected an instant not before now (" + std::to_string(now_ns) + "), got " +
                                             std::to_string(*s.timeout_at_ns));
    }
    const json& words = codec::read_array(a, "", "command");
    if (words.empty()) throw codec_error("/command", "expected at least the command's name");
    s.k = step::kind::command;
    s.argv.reserve(words.size());
    for (std::size_t i = 0; i < words.size(); ++i) s.argv.push_back(read_word(words[i], "/command/" + std::to_string(i)));
    if (s.argv.front().empty()) throw codec_error("/command/0", "expected a command name, got an empty string");
    return s;
  }
  if (a.contains("wait_until")) {
    codec::expect_only_keys(a, "", {"wait_until", "then"});
    s.k = step::kind::wait;
    s.until_ns = codec::read_i64(a, "", "wait_until");
    if (s.until_ns < now_ns)
      throw codec_error("/wait_until", "expected an instant not before now (" + std::to_string(now_ns) + "), got " +
                                           std::to_string(s.until_ns));
    if (a.contains("then")) {
      if (offered == nullptr)
        throw codec_error("/then", "unexpected key; a step runs ahead only where the request offered it (\"ahead\")");
      if (s.until_ns > offered->until_ns)
        throw codec_error("/wait_until", "expected an instant not after the offer's until (" +
                                             std::to_string(offered->until_ns) + ") with a \"then\", got " +
                                             std::to_string(s.until_ns));
      const json& next = a.at("then");
      if (next.is_object() && next.contains("then"))
        throw codec_error("/then/then", "unexpected key; a step runs ahead one wake-up at most");
      try {
        s.then.push_back(read_step(next, kind, s.until_ns, nullptr));
      } catch (const codec_error& e) {
        throw codec_error("/then" + e.path, e.what());
      }
    }
    return s;
  }
  if (!a.contains("done")) throw codec_error("", "expected one of the keys command, wait_until or done");
  codec::expect_only_keys(a, "", {"done", "value"});
  s.k = step::kind::done;
  const std::string d = codec::read_string(a, "", "done");
  using K = gate::client_core::op_kind;
  struct name_of {
    const char* name;
    step::outcome out;
    K kind;
  };
  static constexpr name_of outcomes[] = {
      {"granted", step::outcome::granted, K::acquire},        {"acquire_timeout", step::outcome::acquire_timeout, K::acquire},
      {"unreachable", step::outcome::unreachable, K::acquire}, {"released", step::outcome::released, K::release},
      {"lost", step::outcome::lost, K::release},              {"unreachable", step::outcome::unreachable, K::release},
      {"kept", step::outcome::kept, K::renew},                {"not_kept", step::outcome::not_kept, K::renew},
  };
  bool found = false;
  std::string allowed;
  for (const name_of& o : outcomes) {
    if (o.kind != kind) continue;
    allowed += (allowed.empty() ? "\"" : ", \"") + std::string(o.name) + "\"";
    if (d == o.name) {
      s.out = o.out;
      found = true;
    }
  }
  if (!found)
    throw codec_error("/done", "expected one of " + allowed + " (the ends of " + op_name(kind) + "), got \"" + d + "\"");
  if (a.contains("value")) {
    if (s.out != step::outcome::granted) throw codec_error("/value", "unexpected key; a value goes only with granted");
    s.value = codec::read_i64(a, "", "value");
    if (s.value < 1) throw codec_error("/value", "expected a grant's value of at least 1, got " + std::to_string(s.value));
  } else if (s.out == step::outcome::granted) {
    s.value = 1;
  }
  return s;
}

}  // namespace admit::world::lease::msg
