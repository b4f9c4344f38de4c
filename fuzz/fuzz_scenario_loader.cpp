// fuzz_scenario_loader: arbitrary bytes into the scenario loader and validator.
//
// Goal: no input crashes the loader or escapes it with anything but a
// scenario_error. Method: feed the bytes to load_scenario_text, as
// `admitsim run|check` does with a file's contents, and check the two ends:
//  - rejected: a scenario_error whose message the CLI can print as one line
//    (a JSON Pointer, then what was expected);
//  - accepted: the document re-serialised as a report embeds it
//    (dump(2), what `admitsim replay` loads when the file has moved) is
//    accepted too, so every report that `run` writes can be replayed.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.hpp"

namespace {

constexpr const char* target = "fuzz_scenario_loader";

void one_input(std::string_view text) {
  using admit::fuzz::finding;
  try {
    (void)admit::scenario::load_scenario_text(text);
  } catch (const admit::scenario::scenario_error& e) {
    admit::fuzz::check_error_message(target, e);
    return;
  }
  admit::fuzz::json doc;
  try {
    doc = admit::fuzz::json::parse(text);
  } catch (const std::exception& e) {
    finding(target, std::string("the loader accepted text that the report's JSON parser rejects: ") + e.what());
  }
  const std::string embedded = doc.dump(2);
  try {
    (void)admit::scenario::load_scenario_text(embedded);
    (void)admit::scenario::load_scenario_json(doc);
  } catch (const admit::scenario::scenario_error& e) {
    finding(target, std::string("accepted as a file but rejected as a report's embedded source: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    one_input(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception& e) {
    admit::fuzz::finding(target, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    admit::fuzz::finding(target, "unexpected exception of an unknown type");
  }
  return 0;
}
