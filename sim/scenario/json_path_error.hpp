// scenario_error: a rejected input, with the JSON path of the bad value.
#pragma once

#include <stdexcept>
#include <string>

namespace admit::scenario {

class scenario_error : public std::runtime_error {
 public:
  scenario_error(std::string json_path, const std::string& what_expected)
      : std::runtime_error(one_line(json_path + ": " + what_expected)), path(std::move(json_path)) {}
  std::string path;  // JSON Pointer ("/faults/2/at"); "/" is the whole document

 private:
  // The CLI prints the message as one line, but a path holds object keys as
  // they are, and a key may hold any character ("a\nb" in JSON): control
  // characters are shown as \xNN.
  static std::string one_line(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        static constexpr char hex[] = "0123456789abcdef";
        out += "\\x";
        out += hex[u >> 4];
        out += hex[u & 0xf];
      } else {
        out += c;
      }
    }
    return out;
  }
};

}  // namespace admit::scenario
