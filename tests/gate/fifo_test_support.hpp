// Helpers shared by the FIFO gate tests: readable Catch2 output for the gate's
// enums and events, and a compact "order status active/waiting" view of a log.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"

namespace admit::fifo::test {

// "3 released 0/1": the four fields the lab records for each event.
inline std::string lab_line(const event& e) {
  std::string out = std::to_string(e.order);
  out += ' ';
  out += to_string(e.st);
  out += ' ';
  out += std::to_string(e.active);
  out += '/';
  out += std::to_string(e.waiting);
  return out;
}

inline std::vector<std::string> lab_view(const fifo_gate& gate) {
  std::vector<std::string> lines;
  for (const event& e : gate.snap().events) lines.push_back(lab_line(e));
  return lines;
}

}  // namespace admit::fifo::test

namespace Catch {

template <>
struct StringMaker<admit::fifo::status> {
  static std::string convert(admit::fifo::status v) { return std::string(to_string(v)); }
};
template <>
struct StringMaker<admit::fifo::acquire_outcome> {
  static std::string convert(admit::fifo::acquire_outcome v) { return std::string(to_string(v)); }
};
template <>
struct StringMaker<admit::fifo::leave_outcome> {
  static std::string convert(admit::fifo::leave_outcome v) { return std::string(to_string(v)); }
};
template <>
struct StringMaker<admit::fifo::mutation> {
  static std::string convert(admit::fifo::mutation v) { return std::string(to_string(v)); }
};
template <>
struct StringMaker<admit::fifo::event> {
  static std::string convert(const admit::fifo::event& e) {
    // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
    std::string out = "{";
    out += admit::fifo::test::lab_line(e);
    out += " at ";
    out += std::to_string(e.at_ns);
    out += " ticket ";
    out += std::to_string(e.ticket);
    out += "}";
    return out;
  }
};

}  // namespace Catch
