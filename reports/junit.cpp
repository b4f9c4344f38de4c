#include "reports/junit.hpp"

#include <cstddef>
#include <cstdint>

namespace admit::reports {

namespace {

void hex_byte(std::string& o, unsigned char u) {
  static constexpr char hex[] = "0123456789abcdef";
  o += "\\x";
  o += hex[u >> 4];
  o += hex[u & 0xf];
}

// The length of the well-formed UTF-8 sequence at s[i] that XML 1.0 may hold, or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    cp = b0 & 0x0Fu;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    cp = b0 & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  // Overlong forms, surrogates, beyond U+10FFFF, and U+FFFE/U+FFFF are not characters XML holds.
  const std::uint32_t min_cp = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min_cp || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return n;
}

const char* element_of(junit_case::outcome r) {
  switch (r) {
    case junit_case::outcome::failure: return "failure";
    case junit_case::outcome::error: return "error";
    case junit_case::outcome::skipped: return "skipped";
    case junit_case::outcome::passed: break;
  }
  return nullptr;
}

struct counts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  void add(const junit_case& c) {
    ++tests;
    if (c.result == junit_case::outcome::failure) ++failures;
    if (c.result == junit_case::outcome::error) ++errors;
    if (c.result == junit_case::outcome::skipped) ++skipped;
  }
  std::string attributes() const {
    return " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
           std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\"";
  }
};

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 16);
  for (std::size_t i = 0; i < s.size();) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x80) {
      const std::size_t n = utf8_length(s, i);
      if (n == 0) {
        hex_byte(o, u);
        ++i;
      } else {
        o.append(s, i, n);
        i += n;
      }
      continue;
    }
    switch (u) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      // As character references, in text and attributes alike: a reader normalises a raw newline
      // or tab in an attribute to a space, and a reference survives that.
      case '\n': o += "&#10;"; break;
      case '\t': o += "&#9;"; break;
      case '\r': o += "&#13;"; break;
      default:
        if (u < 0x20 || u == 0x7f) hex_byte(o, u);
        else o += static_cast<char>(u);
    }
    ++i;
  }
  return o;
}

std::string render_junit(const std::string& name, const std::vector<junit_suite>& suites) {
  counts all;
  for (const auto& s : suites)
    for (const auto& c : s.cases) all.add(c);
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<testsuites name=\"" + xml_escape(name) + "\"" + all.attributes() + ">\n";
  for (const auto& s : suites) {
    counts n;
    for (const auto& c : s.cases) n.add(c);
    o += "  <testsuite name=\"" + xml_escape(s.name) + "\"" + n.attributes() + ">\n";
    for (const auto& c : s.cases) {
      o += "    <testcase classname=\"" + xml_escape(c.classname) + "\" name=\"" + xml_escape(c.name) + "\"";
      const char* element = element_of(c.result);
      if (element == nullptr && !c.system_out) {
        o += "/>\n";
        continue;
      }
      o += ">\n";
      if (element != nullptr) {
        o += std::string("      <") + element + " message=\"" + xml_escape(c.message) + "\"";
        if (c.text.empty()) {
          o += "/>\n";
        } else {
          // Appended piece by piece (g++ 12 warns, wrongly, of an overlap in "x" + std::string&&).
          o += '>';
          o += xml_escape(c.text);
          o += "</";
          o += element;
          o += ">\n";
        }
      }
      if (c.system_out) o += "      <system-out>" + xml_escape(*c.system_out) + "</system-out>\n";
      o += "    </testcase>\n";
    }
    o += "  </testsuite>\n";
  }
  o += "</testsuites>\n";
  return o;
}

}  // namespace admit::reports
