// Helpers shared by the HTML page's tests (html_test.cpp, html_zoom_test.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace admit::test {

// How many times `needle` occurs in `hay`, without overlaps.
inline std::size_t occurrences(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

// `html` without the lines that show the kernel's diagnostics (reports/html.cpp, diagnostics_line): what the
// kernel did to produce a run, which a faster kernel changes without changing the run.
inline std::string html_without_diagnostics(const std::string& html) {
  constexpr std::string_view line_start = "\n<p class=\"note diagnostics\">";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = html.find(line_start); at != std::string::npos; at = html.find(line_start, from)) {
    out.append(html, from, at + 1 - from);
    const std::size_t end = html.find('\n', at + 1);
    from = end == std::string::npos ? html.size() : end + 1;
  }
  out.append(html, from, std::string::npos);
  return out;
}

}  // namespace admit::test
