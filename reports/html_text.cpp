#include "reports/html_text.hpp"

namespace admit::reports {

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 8);
  for (const char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

void append_px(std::string& o, px p) {
  // In unsigned arithmetic, so that the least int64 is negated without overflow.
  std::uint64_t t = static_cast<std::uint64_t>(p.tenths);
  if (p.tenths < 0) {
    o += '-';
    t = 0 - t;
  }
  o += std::to_string(t / 10);
  if (t % 10 != 0) {
    o += '.';
    o += static_cast<char>('0' + t % 10);
  }
}

std::ostream& operator<<(std::ostream& o, px p) {
  std::string s;
  append_px(s, p);
  return o << s;
}

}  // namespace admit::reports
