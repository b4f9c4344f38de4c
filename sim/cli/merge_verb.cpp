// admitsim merge SUMMARY... [--out DIR] [--shrink-max K] [--quiet]: the summaries of the shards
// 0/N .. N-1/N of one seed search, combined into the summary that `admitsim explore FILE --out DIR`
// with the same options and no --shard writes, byte for byte (docs/explore.md, "Searches across
// machines").
//
// Why each field combines: the seeds of a search are split by seed % N, and every figure of the
// summary is a count over seeds (summed), a first seed (the least over the shards: each shard's
// seeds are in seed order), or a list in seed order (merged by seed). The findings listed are the
// first findings_listed_max in seed order; each of them is among the first of its own shard, so
// the shards' lists hold them all. A shrink is a function of the scenario, the seed, the kind and
// --shrink-runs alone, so the shrink of a kind's first seed is the one the shard holding that seed
// made, if that shard chose to shrink it; where it did not, merge refuses. What a summary does not
// say (--no-shrink, --shrink-max, --shrink-runs, the first inconclusive seed) a shard's summary
// carries in "merge" (explore.cpp). The shrinks' files are taken from beside each shard's summary;
// their reports are written again, since a report names its scenario file's path.
//
// Refused (exit 2, one line naming the file and the JSON path): a file that is not a shard's
// summary, an interrupted or incomplete shard, a --time search (its seeds are no prefix), a
// --perturb-ties or --ties-only search (distinct orders across seeds are not a sum), summaries of
// different scenarios, options or shard counts, a missing or repeated shard, a shrink the search
// as one would have made that no shard made.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/evidence.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/finding_kinds.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/cli/verb.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

namespace admit::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// As explore.cpp's: the summary lists at most this many seeds with findings in full.
constexpr std::size_t findings_listed_max = 1'000;
// The most shards one merge reads: each summary is held in memory (up to 1,000 findings, a few
// MiB), and every shard's until the merged summary is written (docs/limits.md).
constexpr std::uint64_t shards_max = 1'000;
constexpr std::size_t summary_depth_max = 32;

std::string shown(const json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// One summary's JSON, checked field by field; every refusal names the file and the JSON path.
class reader {
 public:
  explicit reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw input_error{file_, path + ": " + what};
  }
  const json& at(const json& obj, const std::string& path, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path + "/" + key, "missing");
    return *it;
  }
  const json& object(const json& obj, const std::string& path, const char* key) const {
    const json& j = at(obj, path, key);
    if (!j.is_object()) fail(path + "/" + key, "expected an object, got " + shown(j));
    return j;
  }
  const json& array(const json& obj, const std::string& path, const char* key) const {
    const json& j = at(obj, path, key);
    if (!j.is_array()) fail(path + "/" + key, "expected an array, got " + shown(j));
    return j;
  }
  std::uint64_t number(const json& obj, const std::string& path, const char* key) const {
    const json& j = at(obj, path, key);
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
      fail(path + "/" + key, "expected an integer from 0 to 2^64-1, got " + shown(j));
    return j.get<std::uint64_t>();
  }
  std::optional<std::uint64_t> number_or_null(const json& obj, const std::string& path, const char* key) const {
    if (at(obj, path, key).is_null()) return std::nullopt;
    return number(obj, path, key);
  }
  std::string string(const json& obj, const std::string& path, const char* key) const {
    const json& j = at(obj, path, key);
    if (!j.is_string()) fail(path + "/" + key, "expected a string, got " + shown(j));
    return j.get<std::string>();
  }
  bool boolean(const json& obj, const std::string& path, const char* key) const {
    const json& j = at(obj, path, key);
    if (!j.is_boolean()) fail(path + "/" + key, "expected true or false, got " + shown(j));
    return j.get<bool>();
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// One kind of finding over the shards: as explore.cpp's finding_kind.
// A shrink the merged summary lists, and where its files are.
struct shrink_entry {
  json entry;  // as the shard wrote it, its paths then moved to the merge's folder
  std::string explored_from, minimal_from;  // beside the shard's summary ("" when none)
};

// One shard's summary, checked.
struct shard {
  std::string file;
  json doc;
  std::uint64_t index = 0, count = 1;
  bool shrink = true;
  std::uint64_t shrink_max = 0, shrink_runs = 0;
  std::optional<std::pair<std::uint64_t, std::string>> first_inconclusive;
  std::uint64_t findings_total = 0;  // listed and omitted
  reports::evidence evidence;        // what the shard's seeds rest on
  std::map<std::string, reports::evidence> evidence_by_variant;
};

// "I/N" with 0 <= I < N, as explore's --shard.
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_shard(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const auto digits = [](const std::string& d) {
    return !d.empty() && d.size() <= 19 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string i = s.substr(0, slash), n = s.substr(slash + 1);
  if (!digits(i) || !digits(n)) return std::nullopt;
  const std::uint64_t iv = std::stoull(i), nv = std::stoull(n);
  if (nv < 1 || iv >= nv) return std::nullopt;
  return std::make_pair(iv, nv);
}

shard read_shard(const std::string& file) {
  shard sh;
  sh.file = file;
  const reader r(file);
  // "-" is a file named so: a shard's files are found beside its summary, which standard input has not.
  const std::string bytes = read_input(file, "explore summary", false);
  try {
    // A summary is shallow (a finding's broken invariant is 7 levels down): the bound keeps every
    // copy, comparison and dump below off a deep recursion.
    sh.doc = scenario::parse_json_text(bytes, {summary_depth_max});
  } catch (const scenario::scenario_error& e) {
    throw input_error{file, std::string(e.what()) + " (an explore summary, format admitsim-explore/1, is JSON)"};
  }
  const json& d = sh.doc;
  if (!d.is_object()) r.fail("", "expected an explore summary (an object of format admitsim-explore/1)");
  const auto format = d.find("format");
  if (format == d.end() || *format != "admitsim-explore/1")
    r.fail("/format", "expected \"admitsim-explore/1\" (the summary admitsim explore writes), got " +
                          (format == d.end() ? std::string("nothing") : shown(*format)));
  const json& sc = r.object(d, "", "scenario");
  r.string(sc, "/scenario", "name");
  r.string(sc, "/scenario", "file");
  r.string(sc, "/scenario", "sha256");
  const json& seeds = r.object(d, "", "seeds");
  if (seeds.contains("complete"))
    r.fail("/seeds/complete", "the search was interrupted (SIGINT) before it finished: run this shard again");
  const std::uint64_t first = r.number(seeds, "/seeds", "first");
  const auto count = r.number_or_null(seeds, "/seeds", "count");
  if (!count)
    r.fail("/seeds/count", "null: a --time search ran as many seeds as its wall time allowed on each machine, so its "
                           "shards are no split of one seed range; give the shards --seeds N");
  const auto parsed = parse_shard(r.string(seeds, "/seeds", "shard"));
  if (!parsed) r.fail("/seeds/shard", "expected I/N with 0 <= I < N, got " + shown(seeds["shard"]));
  std::tie(sh.index, sh.count) = *parsed;
  const std::string mode = r.string(d, "", "mode");
  if (mode != "swarm")
    r.fail("/mode", "\"" + mode + "\": " +
                        (mode == "guided"
                             ? std::string("a guided search learns from its own seeds in order, so the shards of one "
                                           "are separate searches, not a split of one; merge takes swarm searches only")
                             : mode == "plain" ? std::string("merge takes swarm searches only")
                                               : std::string("the distinct same-instant orders of --perturb-ties and "
                                                             "--ties-only are counted over all seeds, which the shards' "
                                                             "counts cannot give; merge takes swarm searches only")));
  r.at(d, "", "bounds");
  // Every seed of the shard ran, and no other.
  explore::seed_range range;
  range.first = first;
  // The seeds stop at 2^64-1 (explore::seed_range::at): a range past it holds fewer than --seeds.
  range.count = first == 0 ? *count : std::min(*count, UINT64_MAX - first + 1);
  range.shard_index = sh.index;
  range.shard_count = sh.count;
  const std::uint64_t held = range.size().value_or(0);
  const std::uint64_t ran = r.number(seeds, "/seeds", "ran");
  if (ran != held)
    r.fail("/seeds/ran", "expected " + std::to_string(held) + ", the seeds shard " + seeds["shard"].get<std::string>() +
                             " holds, got " + std::to_string(ran) + ": an incomplete shard");
  const auto last = r.number_or_null(seeds, "/seeds", "last");
  const auto last_held = held == 0 ? std::nullopt : range.at(held - 1);
  if (last != last_held) r.fail("/seeds/last", "expected " + (last_held ? std::to_string(*last_held) : "null"));

  const json& totals = r.object(d, "", "totals");
  for (const char* key : {"runs", "seeds_with_violation", "seeds_with_counterexample", "errors", "seeds_inconclusive"})
    r.number(totals, "/totals", key);
  try {
    sh.evidence = reports::evidence::from_json(r.object(d, "", "evidence"));
  } catch (const reports::evidence_error& e) {
    r.fail("/evidence" + e.path, e.what());
  }
  const json& by_variant = r.array(d, "", "evidence_by_variant");
  for (std::size_t i = 0; i < by_variant.size(); ++i) {
    const std::string p = "/evidence_by_variant/" + std::to_string(i);
    if (!by_variant[i].is_object()) r.fail(p, "expected an object");
    const std::string variant = r.string(by_variant[i], p, "variant");
    try {
      if (!sh.evidence_by_variant.emplace(variant, reports::evidence::from_json(by_variant[i])).second)
        r.fail(p + "/variant", "\"" + variant + "\" twice");
    } catch (const reports::evidence_error& e) {
      r.fail(p + e.path, e.what());
    }
  }
  const json& by_kind = r.array(totals, "/totals", "by_kind");
  for (std::size_t i = 0; i < by_kind.size(); ++i) {
    const std::string p = "/totals/by_kind/" + std::to_string(i);
    if (!by_kind[i].is_object()) r.fail(p, "expected an object");
    r.string(by_kind[i], p, "variant");
    r.string(by_kind[i], p, "invariant");
    r.boolean(by_kind[i], p, "counterexample");
    const std::uint64_t kind_seeds = r.number(by_kind[i], p, "seeds");
    const std::uint64_t kind_first = r.number(by_kind[i], p, "first_seed");
    const json& causes = r.array(by_kind[i], p, "causes");
    for (std::size_t c = 0; c < causes.size(); ++c) {
      const std::string cp = p + "/causes/" + std::to_string(c);
      if (!causes[c].is_object()) r.fail(cp, "expected an object");
      r.string(causes[c], cp, "kind");
      const std::uint64_t cause_seeds = r.number(causes[c], cp, "seeds");
      if (cause_seeds < 1 || cause_seeds > kind_seeds)
        r.fail(cp + "/seeds", "expected 1 to the kind's " + std::to_string(kind_seeds) + " seeds, got " + std::to_string(cause_seeds));
      if (r.number(causes[c], cp, "first_seed") < kind_first)
        r.fail(cp + "/first_seed", "expected a seed at or after the kind's first, " + std::to_string(kind_first));
      r.string(causes[c], cp, "example");
    }
  }
  const json& expected = r.array(d, "", "expected_violations");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string p = "/expected_violations/" + std::to_string(i);
    if (!expected[i].is_object()) r.fail(p, "expected an object");
    r.string(expected[i], p, "variant");
    r.at(expected[i], p, "verdict");
    r.at(expected[i], p, "violated");
    r.number_or_null(expected[i], p, "shown_first_by_seed");
  }
  const json& findings = r.array(d, "", "findings");
  if (findings.size() > findings_listed_max)
    r.fail("/findings", "expected at most " + std::to_string(findings_listed_max) + " seeds, got " +
                            std::to_string(findings.size()));
  std::optional<std::uint64_t> previous;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const std::string p = "/findings/" + std::to_string(i);
    if (!findings[i].is_object()) r.fail(p, "expected an object");
    const std::uint64_t seed = r.number(findings[i], p, "seed");
    if (seed % sh.count != sh.index || seed < first || seed - first >= *count)
      r.fail(p + "/seed", std::to_string(seed) + " is not a seed of shard " + seeds["shard"].get<std::string>());
    if (previous && seed <= *previous) r.fail(p + "/seed", "expected the seeds in ascending order");
    previous = seed;
  }
  const std::uint64_t omitted = r.number(d, "", "findings_omitted");
  if (omitted != 0 && findings.size() != findings_listed_max)
    r.fail("/findings_omitted", "expected 0 with fewer than " + std::to_string(findings_listed_max) + " findings listed");
  sh.findings_total = findings.size() + omitted;
  const json& shrunk = r.array(d, "", "shrunk");
  for (std::size_t i = 0; i < shrunk.size(); ++i) {
    const std::string p = "/shrunk/" + std::to_string(i);
    if (!shrunk[i].is_object()) r.fail(p, "expected an object");
    r.number(shrunk[i], p, "seed");
    r.string(shrunk[i], p, "variant");
    r.string(shrunk[i], p, "invariant");
    r.string(shrunk[i], p, "explored_scenario");
    r.string(shrunk[i], p, "explored_report");
    for (const char* key : {"minimal_scenario", "minimal_report"})  // null when the shrink did not start
      if (!r.at(shrunk[i], p, key).is_null()) r.string(shrunk[i], p, key);
    if (shrunk[i]["minimal_scenario"].is_null() != shrunk[i]["minimal_report"].is_null())
      r.fail(p + "/minimal_report", "expected null exactly when minimal_scenario is null");
    r.boolean(shrunk[i], p, "reproduced");
    r.boolean(shrunk[i], p, "needs_perturbed_order");
  }
  r.object(d, "", "exit");
  const auto m = d.find("merge");
  if (m == d.end())
    r.fail("/merge", "missing: merge takes the summaries of shards (admitsim explore --shard I/N with N > 1), which "
                     "carry what it needs; this one is of a search on one machine or of an older admitsim");
  if (!m->is_object()) r.fail("/merge", "expected an object, got " + shown(*m));
  sh.shrink = r.boolean(*m, "/merge", "shrink");
  sh.shrink_max = r.number(*m, "/merge", "shrink_max");
  sh.shrink_runs = r.number(*m, "/merge", "shrink_runs");
  const json& fi = r.at(*m, "/merge", "first_inconclusive");
  if (!fi.is_null()) {
    if (!fi.is_object()) r.fail("/merge/first_inconclusive", "expected an object or null");
    sh.first_inconclusive.emplace(r.number(fi, "/merge/first_inconclusive", "seed"),
                                  r.string(fi, "/merge/first_inconclusive", "reason"));
  }
  return sh;
}

// The shards are of one search: the first shard's scenario, seeds, mode, bounds and options.
void check_same_search(const std::vector<shard>& shards) {
  const shard& a = shards.front();
  for (const shard& b : shards) {
    const reader r(b.file);
    const auto same = [&](const std::string& path, const json& x, const json& y, const std::string& what) {
      if (x != y) r.fail(path, what + ": expected " + shown(x) + " as in " + a.file + ", got " + shown(y));
    };
    for (const char* key : {"sha256", "name", "file"})
      same(std::string("/scenario/") + key, a.doc["scenario"][key], b.doc["scenario"][key], "another scenario");
    same("/seeds/first", a.doc["seeds"]["first"], b.doc["seeds"]["first"], "another --first-seed");
    same("/seeds/count", a.doc["seeds"]["count"], b.doc["seeds"]["count"], "another --seeds");
    if (a.count != b.count)
      r.fail("/seeds/shard", "a shard of " + std::to_string(b.count) + ", expected one of " + std::to_string(a.count) +
                                 " as in " + a.file);
    same("/bounds", a.doc["bounds"], b.doc["bounds"], "other bounds");
    same("/merge/shrink", json(a.shrink), json(b.shrink), "another --no-shrink");
    same("/merge/shrink_max", json(a.shrink_max), json(b.shrink_max), "another --shrink-max");
    same("/merge/shrink_runs", json(a.shrink_runs), json(b.shrink_runs), "another --shrink-runs");
  }
  std::map<std::uint64_t, const shard*> by_index;
  for (const shard& b : shards) {
    const auto [it, inserted] = by_index.emplace(b.index, &b);
    if (!inserted)
      throw input_error{b.file, "/seeds/shard: shard " + std::to_string(b.index) + "/" + std::to_string(b.count) +
                                    " again (also " + it->second->file + ")"};
  }
  if (by_index.size() != a.count) {
    std::uint64_t missing = 0;
    while (by_index.count(missing) != 0) ++missing;
    throw input_error{"merge", "shard " + std::to_string(missing) + "/" + std::to_string(a.count) + " is missing: " +
                                   std::to_string(by_index.size()) + " of the " + std::to_string(a.count) +
                                   " shards given"};
  }
}

std::uint64_t add(std::uint64_t a, std::uint64_t b, const std::string& file, const std::string& path) {
  if (a > UINT64_MAX - b) throw input_error{file, path + ": the sum over the shards exceeds 2^64-1"};
  return a + b;
}

// The command that replays one seed of a swarm search (explore.cpp's seed_search::replay_of).
std::string replay_of(const std::string& file, std::uint64_t seed) {
  return "admitsim explore " + reports::shell_quote(file) + " --first-seed " + std::to_string(seed) + " --seeds 1";
}

// The path a file beside `summary` has, named as the shard named it.
std::string beside(const std::string& summary, const std::string& named) {
  return (fs::path(summary).parent_path() / fs::path(named).filename()).string();
}

// What the merge writes: the summary and the shrinks' files.
struct merged {
  json summary;
  std::vector<shrink_entry> shrinks;
  int rc = exit_as_expected;
  std::vector<std::string> why;
};

merged merge_shards(std::vector<shard>& shards, const std::string& dir, std::optional<std::uint64_t> shrink_max) {
  check_same_search(shards);
  std::sort(shards.begin(), shards.end(), [](const shard& a, const shard& b) { return a.index < b.index; });
  const shard& a = shards.front();
  const std::string file = a.doc["scenario"]["file"].get<std::string>();
  const std::uint64_t first = a.doc["seeds"]["first"].get<std::uint64_t>();
  const std::uint64_t count = a.doc["seeds"]["count"].get<std::uint64_t>();

  json totals;
  std::uint64_t ran = 0;
  for (const char* key : {"runs", "seeds_with_violation", "seeds_with_counterexample", "errors", "seeds_inconclusive"}) {
    std::uint64_t sum = 0;
    for (const shard& s : shards) sum = add(sum, s.doc["totals"][key].get<std::uint64_t>(), s.file, std::string("/totals/") + key);
    totals[key] = sum;
  }
  std::uint64_t last = 0;  // the last seed any shard ran: the last the search as one runs
  for (const shard& s : shards) {
    ran += s.doc["seeds"]["ran"].get<std::uint64_t>();
    if (!s.doc["seeds"]["last"].is_null()) last = std::max(last, s.doc["seeds"]["last"].get<std::uint64_t>());
  }

  // The kinds summed over the shards, in explore's order (finding_kinds.hpp).
  finding_kind_map kinds;
  for (const shard& s : shards)
    for (const json& k : s.doc["totals"]["by_kind"]) {
      const finding_kind one{k["variant"].get<std::string>(), k["invariant"].get<std::string>(),
                             k["counterexample"].get<bool>(), k["first_seed"].get<std::uint64_t>(),
                             k["seeds"].get<std::uint64_t>(), {}};
      auto [it, inserted] = kinds.emplace(one.key(), one);
      // Each cause's seeds summed, its example from the least first seed (finding_kind::add_cause).
      for (const json& c : k["causes"]) {
        const std::string ck = c["kind"].get<std::string>();
        const auto had = it->second.causes.find(ck);
        if (had != it->second.causes.end())
          (void)add(had->second.seeds, c["seeds"].get<std::uint64_t>(), s.file, "/totals/by_kind");
        it->second.add_cause(ck, kind_cause{c["seeds"].get<std::uint64_t>(), c["first_seed"].get<std::uint64_t>(),
                                            c["example"].get<std::string>()});
      }
      if (inserted) continue;
      it->second.seeds = add(it->second.seeds, one.seeds, s.file, "/totals/by_kind");
      it->second.first_seed = std::min(it->second.first_seed, one.first_seed);
      it->second.counterexample = it->second.counterexample || one.counterexample;
    }
  const std::vector<finding_kind> order = kinds_in_summary_order(kinds);
  totals["by_kind"] = by_kind_json(order);

  // Expected violations by variant, each shown first by the least seed any shard saw break it.
  std::map<std::string, json> expected;
  for (const shard& s : shards)
    for (const json& e : s.doc["expected_violations"]) {
      const std::string variant = e["variant"].get<std::string>();
      auto [it, inserted] = expected.emplace(variant, e);
      if (inserted) continue;
      const json& mine = it->second["shown_first_by_seed"];
      const json& theirs = e["shown_first_by_seed"];
      if (mine.is_null() || (!theirs.is_null() && theirs.get<std::uint64_t>() < mine.get<std::uint64_t>()))
        it->second["shown_first_by_seed"] = theirs;
    }
  json expectations = json::array();
  for (auto& [variant, e] : expected) expectations.push_back(e);

  // The first findings in seed order, from every shard's first.
  std::vector<const json*> findings;
  std::uint64_t findings_total = 0;
  for (const shard& s : shards) {
    for (const json& f : s.doc["findings"]) findings.push_back(&f);
    findings_total = add(findings_total, s.findings_total, s.file, "/findings_omitted");
  }
  std::sort(findings.begin(), findings.end(),
            [](const json* x, const json* y) { return (*x)["seed"].get<std::uint64_t>() < (*y)["seed"].get<std::uint64_t>(); });
  if (findings.size() > findings_listed_max) findings.resize(findings_listed_max);
  json listed = json::array();
  for (const json* f : findings) listed.push_back(*f);

  // The shrinks the search as one would make: of the first K kinds, each from the shard of its first seed.
  merged out;
  const std::uint64_t k_max = shrink_max.value_or(a.shrink_max);
  bool failed = false;
  json shrunk = json::array();
  for (std::size_t i = 0; a.shrink && i < order.size() && i < k_max; ++i) {
    const finding_kind& k = order[i];
    const shard& s = shards[k.first_seed % a.count];
    const json* found = nullptr;
    for (const json& e : s.doc["shrunk"])
      if (e["seed"] == k.first_seed && e["variant"] == k.variant && e["invariant"] == k.invariant) found = &e;
    if (!found)
      throw input_error{s.file, "/shrunk: no shrink of seed " + std::to_string(k.first_seed) + " (" +
                                    (k.variant.empty() ? std::string() : "variant " + k.variant + ", ") +
                                    "invariant " + k.invariant + "), which the search as one would shrink as its kind " + std::to_string(i + 1) +
                                    " of --shrink-max " + std::to_string(k_max) +
                                    "; run the shards with a larger --shrink-max (up to 1000) and give merge the "
                                    "--shrink-max of the search as one"};
    shrink_entry se;
    se.entry = *found;
    se.entry["counterexample"] = k.counterexample;  // over all the shards, as the search as one counts it
    for (const char* key : {"explored_scenario", "explored_report", "minimal_scenario", "minimal_report"}) {
      if (se.entry[key].is_null()) continue;
      const std::string named = se.entry[key].get<std::string>();
      if (std::string(key) == "explored_scenario") se.explored_from = beside(s.file, named);
      if (std::string(key) == "minimal_scenario") se.minimal_from = beside(s.file, named);
      se.entry[key] = (fs::path(dir) / fs::path(named).filename()).string();
    }
    if (!se.entry["reproduced"].get<bool>() && !se.entry["needs_perturbed_order"].get<bool>()) failed = true;
    shrunk.push_back(se.entry);
    out.shrinks.push_back(std::move(se));
  }

  // The verdict, in explore's words and order (explore.cpp's reasons_not_as_expected).
  std::vector<std::string>& why = out.why;
  const std::uint64_t counterexamples = totals["seeds_with_counterexample"].get<std::uint64_t>();
  const std::uint64_t errors = totals["errors"].get<std::uint64_t>();
  const std::uint64_t inconclusive = totals["seeds_inconclusive"].get<std::uint64_t>();
  if (counterexamples != 0)
    why.push_back(std::to_string(counterexamples) + " seeds broke an invariant their expectation does not allow");
  if (errors != 0) why.push_back(std::to_string(errors) + " seeds ended in an internal error");
  if (inconclusive != 0) {
    std::optional<std::pair<std::uint64_t, std::string>> first_cut;
    for (const shard& s : shards)
      if (s.first_inconclusive && (!first_cut || s.first_inconclusive->first < first_cut->first))
        first_cut = s.first_inconclusive;
    why.push_back(std::to_string(inconclusive) +
                  " seeds could not finish (inconclusive: a limit cut the run, so it judged nothing it did not reach; "
                  "the first is seed " + std::to_string(first_cut ? first_cut->first : 0) + ", " +
                  (first_cut ? first_cut->second : std::string("?")) + ", replay: " +
                  replay_of(file, first_cut ? first_cut->first : 0) + ")");
  }
  for (const auto& [variant, e] : expected)
    if (e["shown_first_by_seed"].is_null())
      why.push_back("no seed showed the violation expected" + (variant.empty() ? "" : " of " + variant));
  if (failed) why.push_back("a minimal scenario did not reproduce its violation");
  out.rc = why.empty() ? exit_as_expected : exit_not_expected;

  // The summary, key by key as explore.cpp's summary_json writes it.
  json& sj = out.summary;
  sj["format"] = "admitsim-explore/1";
  sj["scenario"] = a.doc["scenario"];
  json seeds;
  seeds["first"] = first;
  seeds["count"] = count;
  seeds["shard"] = "0/1";
  seeds["ran"] = ran;
  seeds["last"] = last;
  sj["seeds"] = std::move(seeds);
  sj["mode"] = "swarm";
  sj["bounds"] = a.doc["bounds"];
  sj["totals"] = std::move(totals);
  reports::evidence ev;
  std::map<std::string, reports::evidence> by_variant;
  for (const shard& s : shards) {
    try {
      ev.merge(s.evidence);
      for (const auto& [variant, v] : s.evidence_by_variant) by_variant[variant].merge(v);
    } catch (const reports::evidence_error& e) {
      throw input_error{s.file, "/evidence" + e.path + ": " + e.what()};
    }
  }
  sj["evidence"] = ev.to_json();
  json variants = json::array();
  for (const auto& [variant, v] : by_variant) {
    json vj;
    vj["variant"] = variant;
    const json e = v.to_json();  // kept: the loop reads into it
    for (const auto& [k, x] : e.items()) vj[k] = x;
    variants.push_back(std::move(vj));
  }
  sj["evidence_by_variant"] = std::move(variants);
  sj["expected_violations"] = std::move(expectations);
  sj["findings"] = std::move(listed);
  sj["findings_omitted"] = findings_total - findings.size();
  sj["shrunk"] = std::move(shrunk);
  json ex;
  ex["code"] = out.rc;
  ex["why"] = why;
  sj["exit"] = std::move(ex);
  return out;
}

void write_or_throw(const std::string& path, const std::string& bytes) {
  if (const auto why = write_output(path, bytes)) throw input_error{path, *why};
}

// A shard's scenario file written at `path`, and the report `admitsim run` writes for it there, as
// the search as one writes them (explore.cpp's write_scenario_and_report): the report names `path`.
void write_scenario_and_report(const std::string& from, const std::string& path, const std::string& report_path) {
  const std::string bytes = read_input(from, "scenario file");
  json doc;
  const scenario::scenario loaded = parse_scenario(from, bytes, doc);
  write_or_throw(path, bytes);
  const std::vector<world::run_record> runs = world::run_all(loaded, loaded.seed);
  reports::report_input in;
  in.sc = &loaded;
  in.source = &doc;
  in.file = path;
  in.sha256 = reports::sha256_hex(bytes);
  for (const auto& r : runs) in.runs.push_back(&r);
  write_or_throw(report_path, reports::render_report(reports::build_report(in)));
}

class merge_verb final : public verb {
 public:
  explicit merge_verb(CLI::App& app)
      : verb(app.add_subcommand("merge",
                                "Combine the summaries of the shards 0/N .. N-1/N of one explore search into the "
                                "summary the search on one machine writes, byte for byte")) {
    sub_->add_option("SUMMARY", files_, "The shards' summaries (DIR/<name>-explore.json), one per shard, any order")
        ->required();
    sub_->add_option("--out", out_dir_,
                     "Directory for the merged summary and the shrinks' files, as explore's --out (default "
                     "out/explore); created if missing, locked while merge writes it");
    shrink_max_given_ =
        sub_->add_option("--shrink-max", shrink_max_,
                         "The --shrink-max of the search as one, when the shards ran with a larger one: 0 to the "
                         "shards' (default: the shards')")
            ->type_name("K");
    sub_->add_flag("--quiet,-q", quiet_, "No summary line on stderr");
  }

  int run() const override {
    std::optional<std::uint64_t> shrink_max;
    if (shrink_max_given_->count() != 0) shrink_max = parse_number("--shrink-max", shrink_max_, 0, 1'000);
    if (files_.size() > shards_max)
      throw input_error{"merge", "expected at most " + std::to_string(shards_max) + " summaries, got " +
                                       std::to_string(files_.size())};
    std::vector<shard> shards;
    // Taken apart without allocating however run() ends (json_parse.hpp).
    struct teardown {
      std::vector<shard>& shards;
      ~teardown() {
        for (shard& s : shards) scenario::dismantle_json(s.doc);
      }
    } const shards_teardown{shards};
    for (const auto& f : files_) shards.push_back(read_shard(f));
    if (shrink_max && *shrink_max > shards.front().shrink_max)
      throw input_error{"--shrink-max", "expected at most " + std::to_string(shards.front().shrink_max) +
                                            ", the shards' --shrink-max, got " + std::to_string(*shrink_max)};
    const std::string name = shards.front().doc["scenario"]["name"].get<std::string>();
    const std::string summary_path = (fs::path(out_dir_) / (name + "-explore.json")).string();
    merged m = merge_shards(shards, out_dir_, shrink_max);
    for (const shard& s : shards)
      if (same_output(s.file, summary_path))
        throw input_error{summary_path, "is a shard's summary given to merge: give merge another --out"};
    dir_lock lock;
    if (auto why = prepare_output_dir(out_dir_)) throw input_error{out_dir_, *why};
    if (auto why = lock.lock(out_dir_)) throw input_error{out_dir_, *why};
    if (auto why = check_output(summary_path)) throw input_error{summary_path, *why};
    for (const shrink_entry& se : m.shrinks) {
      write_scenario_and_report(se.explored_from, se.entry["explored_scenario"].get<std::string>(),
                                se.entry["explored_report"].get<std::string>());
      if (!se.minimal_from.empty())
        write_scenario_and_report(se.minimal_from, se.entry["minimal_scenario"].get<std::string>(),
                                  se.entry["minimal_report"].get<std::string>());
    }
    write_or_throw(summary_path, m.summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    if (!quiet_) {
      const json& t = m.summary["totals"];
      std::fprintf(stderr,
                   "merge: %zu shards of %s, %llu seeds: %llu with violations, %llu with counterexamples, %llu "
                   "errors, %zu shrinks -> %s\n",
                   shards.size(), name.c_str(), static_cast<unsigned long long>(m.summary["seeds"]["ran"].get<std::uint64_t>()),
                   static_cast<unsigned long long>(t["seeds_with_violation"].get<std::uint64_t>()),
                   static_cast<unsigned long long>(t["seeds_with_counterexample"].get<std::uint64_t>()),
                   static_cast<unsigned long long>(t["errors"].get<std::uint64_t>()), m.shrinks.size(),
                   summary_path.c_str());
      for (const auto& w : m.why) std::fprintf(stderr, "  not as expected: %s\n", w.c_str());
    }
    return m.rc;
  }

 private:
  std::vector<std::string> files_;
  std::string out_dir_ = "out/explore";
  std::string shrink_max_;
  CLI::Option* shrink_max_given_ = nullptr;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<verb> make_merge_verb(CLI::App& app) { return std::make_unique<merge_verb>(app); }

}  // namespace admit::cli
