// The --trace writer (sim/cli/trace_file.hpp): its lines parse as JSON and
// say what the sink was given, whatever bytes a text holds; a file past its
// limit, or a write that fails, leaves nothing under the name and says why.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/trace_file.hpp"

using namespace admit;
using json = nlohmann::ordered_json;

namespace {

namespace fs = std::filesystem;

// A folder of its own, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "admitsim-trace-file.XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::vector<json> read_lines(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));  // throws when a line is not JSON
  return out;
}

cli::trace_header header() { return cli::trace_header{"tiny", "tiny.json", 7, std::nullopt}; }

// One run "v" of `n` entries at 1000 ns steps.
void write_run(cli::trace_file& t, int n, std::string_view what = "admitted") {
  t.begin_run("v");
  for (int i = 0; i < n; ++i)
    t.entry(check::trace_line{1000 * i, "g", what, i, 0, static_cast<std::uint64_t>(i)});
  t.end_run();
}

}  // namespace

TEST_CASE("a trace is a begin line, one line per entry and an end line per run", "[cli][trace]") {
  // Goal: the documented shape (docs/trace.md). Method: two runs, read back and parsed.
  temp_dir d;
  const fs::path p = d.path / "t.jsonl";
  cli::trace_file t;
  REQUIRE_FALSE(t.open(p.string(), cli::trace_header{"tiny", "tiny.json", 7, std::string("3:1")}));
  write_run(t, 3);
  t.begin_run("");
  t.entry(check::trace_line{5, "request", "portal begin", 1, 2, 9});
  t.end_run();
  REQUIRE_FALSE(t.commit());
  const std::vector<json> lines = read_lines(p);
  REQUIRE(lines.size() == 8);
  CHECK(lines[0].dump() ==
        R"({"run":"v","begin":{"format":"admitsim-trace/1","scenario":"tiny","file":"tiny.json","seed":7,"order":"3:1"}})");
  CHECK(lines[2].dump() == R"({"run":"v","at_ns":1000,"source":"g","what":"admitted","active":1,"waiting":0,"ref":1})");
  CHECK(lines[4].dump() == R"({"run":"v","end":{"entries":3}})");
  CHECK(lines[5]["run"] == "");
  CHECK(lines[6].dump() == R"({"run":"","at_ns":5,"source":"request","what":"portal begin","active":1,"waiting":2,"ref":9})");
  CHECK(lines[7]["end"]["entries"] == 1);
}

TEST_CASE("every text is a JSON string, whatever bytes it holds", "[cli][trace]") {
  // Goal: a line always parses. Method: quotes, backslashes, control bytes, UTF-8 and bytes that are not UTF-8.
  const std::string texts[] = {"plain", "a \"quoted\" \\ word", std::string("nul\0tab\tnl\n\x1f\x7f", sizeof("nul\0tab\tnl\n\x1f\x7f") - 1),
                               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "bad \xff \xc3 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf"};
  for (const std::string& text : texts) {
    std::string out;
    cli::append_json_string(out, text);
    INFO(out);
    const json parsed = json::parse(out);  // strict UTF-8: throws on anything invalid
    REQUIRE(parsed.is_string());
    if (text.find('\xff') == std::string::npos) CHECK(parsed.get<std::string>() == text);
  }
  std::string bad;
  cli::append_json_string(bad, "a\xff" "b");
  CHECK(bad == "\"a\\ufffdb\"");
}

TEST_CASE("a trace past its limit leaves nothing under its name and says why", "[cli][trace][limits]") {
  // Goal: no partial file passed off as complete. Method: a limit of 1000 bytes, 100 entries; the name held a file before.
  temp_dir d;
  const fs::path p = d.path / "t.jsonl";
  { std::ofstream(p) << "old\n"; }
  cli::trace_file t(1000);
  REQUIRE_FALSE(t.open(p.string(), header()));
  write_run(t, 100);
  REQUIRE(t.failed());
  const auto why = t.commit();
  REQUIRE(why);
  CHECK(*why == "cannot write the trace (it would pass the limit of 1000 bytes for a trace)");
  std::ifstream in(p);
  std::string old;
  std::getline(in, old);
  CHECK(old == "old");  // the file there before is untouched
  for (const auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename() == "t.jsonl");  // no temporary file left
}

TEST_CASE("a trace that fills the disk says so", "[cli][trace]") {
  // Goal: a failed write is an error, not a short file. Method: /dev/full (ENOSPC), enough entries to fill the buffer.
  if (::access("/dev/full", W_OK) != 0) {
    WARN("no writable /dev/full: not tested");
    return;
  }
  cli::trace_file t;
  REQUIRE_FALSE(t.open("/dev/full", header()));
  write_run(t, 2000, "an entry long enough that two thousand of them pass the buffer's 64 KiB");
  REQUIRE(t.failed());
  CHECK(*t.failed() == "cannot write the trace (No space left on device)");
  CHECK(t.commit() == t.failed());
}

TEST_CASE("an entry the world could not make stops the file", "[cli][trace]") {
  // Goal: a lost entry is never silently skipped. Method: lost() in the middle of a run.
  temp_dir d;
  const fs::path p = d.path / "t.jsonl";
  cli::trace_file t;
  REQUIRE_FALSE(t.open(p.string(), header()));
  t.begin_run("v");
  t.lost("out of memory while making a trace entry's text");
  t.end_run();
  const auto why = t.commit();
  REQUIRE(why);
  CHECK(*why == "cannot write the trace (out of memory while making a trace entry's text)");
  CHECK_FALSE(fs::exists(p));
}
