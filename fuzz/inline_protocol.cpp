// fuzz_inline_protocol PROTOCOL_FILE: prints the protocol file with each script put inline ({"source": ...,
// "origin": ...}), as a report embeds it: the form fuzz_protocol_run reads, since its input has no folder for a
// script file to be relative to. fuzz/seed_corpus.sh seeds that target's corpus with it.
//
// Method: the real loader reads a one-request scenario that names the file by path (a quorum protocol with three
// Redis nodes, which it needs), and the protocol is taken from the document it gives back. A refusal prints the
// loader's one line and exits 2.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "sim/scenario/loader.hpp"

namespace {

using json = nlohmann::ordered_json;

std::string scenario_naming(const std::string& path, bool quorum) {
  json sc = {{"name", "inline_protocol"},
             {"gate", {{"kind", "lease"}, {"limit", 1}, {"protocol", path}}},
             {"workload", {{"requests", json::array({json{{"at", "0ms"}}})}}}};
  if (quorum) sc["gate"]["redis_nodes"] = 3;
  return sc.dump();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_inline_protocol PROTOCOL_FILE\n");
    return 2;
  }
  const std::string path = std::filesystem::absolute(argv[1]).string();
  const admit::scenario::load_files files{"/", admit::scenario::plain_file_reader()};
  json doc;
  try {
    (void)admit::scenario::load_scenario_text(scenario_naming(path, false), doc, files);
  } catch (const admit::scenario::scenario_error&) {
    try {
      (void)admit::scenario::load_scenario_text(scenario_naming(path, true), doc, files);
    } catch (const admit::scenario::scenario_error& e) {
      std::fprintf(stderr, "fuzz_inline_protocol: %s: %s\n", argv[1], e.what());
      return 2;
    }
  }
  std::cout << doc["gate"]["protocol"].dump(2) << "\n";
  return 0;
}
