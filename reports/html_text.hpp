// html_text: what the HTML writers share (the report page, the sweep page,
// the matrix page): escaping text for HTML, and SVG coordinates kept as
// integer tenths of a pixel, so that a page's bytes never depend on how a
// platform prints a floating-point number.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace admit::reports {

// `s` with & < > " and ' escaped: safe in an element and in a quoted attribute.
std::string html_escape(std::string_view s);

// A coordinate in tenths of a pixel, written "12.3" ("12" when whole, "-0.5" below zero).
struct px {
  std::int64_t tenths;
};
void append_px(std::string& o, px p);
std::ostream& operator<<(std::ostream& o, px p);

}  // namespace admit::reports
