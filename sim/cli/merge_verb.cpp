// admitsim merge SUMMARY... [--out DIR] [--shrink-max K] [--confirm ...] [--quiet]: the summaries of the shards
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
// With --confirm (docs/confirm.md), once the merged folder is written, each shrink the merged summary
// lists is confirmed on a real redis-server as `explore --confirm` confirms it (its minimal scenario when
// it reproduced, else the seed's explored one), and its confirmation goes into its entry: the summary is
// then the one `admitsim explore FILE --out DIR --confirm` writes, but for the measurements.
//
// Each summary is read through explore::search_summary::from_json (sim/explore/search_summary.hpp),
// the codec explore writes it with; the merged values are written through its to_json.
//
// Refused (exit 2, one line naming the file and the JSON path): a file that is not a shard's
// summary (any key missing, or of the wrong type or range), an interrupted or incomplete shard, a --time search (its seeds are no prefix), a
// --perturb-ties or --ties-only search (distinct orders across seeds are not a sum), summaries of
// different scenarios, options or shard counts, a missing or repeated shard, a shrink the search
// as one would have made that no shard made, --confirm of shards that ran with --no-shrink.
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

#include "gate/admit_assert.hpp"
#include "reports/evidence.hpp"
#include "sim/codec/json_codec.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/confirm_options.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/cli/verb.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/explore/search_summary.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

namespace admit::cli {

using explore::finding_kind;
using explore::finding_kind_map;
using explore::kind_cause;

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using codec::shown;

// The most shards one merge reads: each summary is held in memory (up to 1,000 findings, a few
// MiB), and every shard's until the merged summary is written (docs/limits.md).
constexpr std::uint64_t shards_max = 1'000;
constexpr std::size_t summary_depth_max = 32;

// A refusal of one shard's summary: its file, then the JSON path and what is wrong.
[[noreturn]] void fail(const std::string& file, const std::string& path, const std::string& what) {
  throw input_error{file, path + ": " + what};
}

// A shrink the merged summary lists, and where its files are.
struct shrink_entry {
  explore::shrunk_entry entry;  // as the shard wrote it, its paths then moved to the merge's folder
  std::string explored_from, minimal_from;  // beside the shard's summary ("" when none)
};

// One shard's summary, read and checked.
struct shard {
  std::string file;
  explore::search_summary summary;
  explore::merge_record merge;  // summary.merge, which a shard's summary has
  std::uint64_t index = 0, count = 1;
  std::uint64_t findings_total = 0;  // listed and omitted
};

shard read_shard(const std::string& file) {
  shard sh;
  sh.file = file;
  // "-" is a file named so: a shard's files are found beside its summary, which standard input has not.
  const std::string bytes = read_input(file, "explore summary", false);
  json doc;
  // Taken apart without allocating however this ends (json_parse.hpp).
  const scenario::json_dismantler doc_teardown{doc};
  try {
    // A summary is shallow (a finding's broken invariant is 7 levels down): the bound keeps every
    // copy, comparison and dump below off a deep recursion.
    doc = scenario::parse_json_text(bytes, {summary_depth_max});
  } catch (const scenario::scenario_error& e) {
    throw input_error{file, std::string(e.what()) + " (an explore summary, format admitsim-explore/1, is JSON)"};
  }
  try {
    sh.summary = explore::search_summary::from_json(doc);
  } catch (const codec::codec_error& e) {
    fail(file, e.path, e.what());
  }
  const explore::search_summary& d = sh.summary;
  const explore::seeds_record& seeds = d.seeds;
  const std::string shard_name = std::to_string(seeds.shard_index) + "/" + std::to_string(seeds.shard_count);
  if (!seeds.complete)
    fail(file, "/seeds/complete", "the search was interrupted (SIGINT) before it finished: run this shard again");
  if (!seeds.count)
    fail(file, "/seeds/count", "null: a --time search ran as many seeds as its wall time allowed on each machine, so its "
                               "shards are no split of one seed range; give the shards --seeds N");
  sh.index = seeds.shard_index;
  sh.count = seeds.shard_count;
  if (d.mode != "swarm")
    fail(file, "/mode", "\"" + d.mode + "\": " +
                            (d.mode == "guided"
                                 ? std::string("a guided search learns from its own seeds in order, so the shards of one "
                                               "are separate searches, not a split of one; merge takes swarm searches only")
                                 : d.mode == "plain" ? std::string("merge takes swarm searches only")
                                                     : std::string("the distinct same-instant orders of --perturb-ties and "
                                                                   "--ties-only are counted over all seeds, which the shards' "
                                                                   "counts cannot give; merge takes swarm searches only")));
  // Every seed of the shard ran, and no other.
  explore::seed_range range;
  range.first = seeds.first;
  // The seeds stop at 2^64-1 (explore::seed_range::at): a range past it holds fewer than --seeds.
  range.count = seeds.first == 0 ? *seeds.count : std::min(*seeds.count, UINT64_MAX - seeds.first + 1);
  range.shard_index = sh.index;
  range.shard_count = sh.count;
  const std::uint64_t held = range.size().value_or(0);
  if (seeds.ran != held)
    fail(file, "/seeds/ran", "expected " + std::to_string(held) + ", the seeds shard " + shard_name + " holds, got " +
                                 std::to_string(seeds.ran) + ": an incomplete shard");
  const auto last_held = held == 0 ? std::nullopt : range.at(held - 1);
  if (seeds.last != last_held) fail(file, "/seeds/last", "expected " + (last_held ? std::to_string(*last_held) : "null"));
  for (std::size_t i = 0; i < d.findings.size(); ++i) {
    const std::uint64_t seed = d.findings[i].seed;
    if (seed % sh.count != sh.index || seed < seeds.first || seed - seeds.first >= *seeds.count)
      fail(file, "/findings/" + std::to_string(i) + "/seed", std::to_string(seed) + " is not a seed of shard " + shard_name);
  }
  sh.findings_total = d.findings.size() + d.findings_omitted;
  if (!d.merge)
    fail(file, "/merge", "missing: merge takes the summaries of shards (admitsim explore --shard I/N with N > 1), which "
                         "carry what it needs; this one is of a search on one machine or of an older admitsim");
  sh.merge = *d.merge;
  return sh;
}

// The shards are of one search: the first shard's scenario, seeds, mode, bounds and options.
void check_same_search(const std::vector<shard>& shards) {
  const shard& a = shards.front();
  for (const shard& b : shards) {
    const auto same = [&](const std::string& path, const json& x, const json& y, const std::string& what) {
      if (x != y) fail(b.file, path, what + ": expected " + shown(x) + " as in " + a.file + ", got " + shown(y));
    };
    const json sa = a.summary.scenario.to_json(), sb = b.summary.scenario.to_json();
    for (const char* key : {"sha256", "name", "file"})
      same(std::string("/scenario/") + key, sa[key], sb[key], "another scenario");
    same("/seeds/first", a.summary.seeds.first, b.summary.seeds.first, "another --first-seed");
    same("/seeds/count", codec::or_null(a.summary.seeds.count), codec::or_null(b.summary.seeds.count),
         "another --seeds");
    if (a.count != b.count)
      fail(b.file, "/seeds/shard", "a shard of " + std::to_string(b.count) + ", expected one of " +
                                       std::to_string(a.count) + " as in " + a.file);
    const auto bounds = [](const shard& s) { return s.summary.bounds ? s.summary.bounds->to_json() : json(nullptr); };
    same("/bounds", bounds(a), bounds(b), "other bounds");
    same("/merge/shrink", a.merge.shrink, b.merge.shrink, "another --no-shrink");
    same("/merge/shrink_max", a.merge.shrink_max, b.merge.shrink_max, "another --shrink-max");
    same("/merge/shrink_runs", a.merge.shrink_runs, b.merge.shrink_runs, "another --shrink-runs");
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
  explore::search_summary summary;
  std::vector<shrink_entry> shrinks;
  int rc = exit_as_expected;
  std::vector<std::string> why;
};

merged merge_shards(std::vector<shard>& shards, const std::string& dir, std::optional<std::uint64_t> shrink_max) {
  check_same_search(shards);
  std::sort(shards.begin(), shards.end(), [](const shard& a, const shard& b) { return a.index < b.index; });
  const shard& a = shards.front();
  merged out;
  explore::search_summary& sj = out.summary;
  sj.scenario = a.summary.scenario;
  sj.mode = "swarm";
  sj.bounds = a.summary.bounds;

  // The seeds of the search as one; the last any shard ran is the last it runs.
  sj.seeds.first = a.summary.seeds.first;
  sj.seeds.count = a.summary.seeds.count;
  sj.seeds.last = 0;
  explore::totals_record& totals = sj.totals;
  for (const shard& s : shards) {
    const explore::totals_record& t = s.summary.totals;
    const auto sum = [&](std::uint64_t& into, std::uint64_t n, const char* key) {
      into = add(into, n, s.file, std::string("/totals/") + key);
    };
    sum(totals.runs, t.runs, "runs");
    sum(totals.seeds_with_violation, t.seeds_with_violation, "seeds_with_violation");
    sum(totals.seeds_with_counterexample, t.seeds_with_counterexample, "seeds_with_counterexample");
    sum(totals.errors, t.errors, "errors");
    sum(totals.seeds_inconclusive, t.seeds_inconclusive, "seeds_inconclusive");
    sj.seeds.ran += s.summary.seeds.ran;
    if (s.summary.seeds.last) sj.seeds.last = std::max(*sj.seeds.last, *s.summary.seeds.last);
  }

  // The kinds summed over the shards, in explore's order (search_summary.hpp).
  finding_kind_map kinds;
  for (const shard& s : shards)
    for (const finding_kind& k : s.summary.totals.by_kind) {
      auto [it, inserted] = kinds.emplace(k.key(), finding_kind{k.variant, k.invariant, k.counterexample, k.first_seed,
                                                                k.seeds, {}});
      // Each cause's seeds summed, its example from the least first seed (finding_kind::add_cause).
      for (const auto& [kind, c] : k.causes) {
        const auto had = it->second.causes.find(kind);
        if (had != it->second.causes.end()) (void)add(had->second.seeds, c.seeds, s.file, "/totals/by_kind");
        it->second.add_cause(kind, c);
      }
      if (inserted) continue;
      it->second.seeds = add(it->second.seeds, k.seeds, s.file, "/totals/by_kind");
      it->second.first_seed = std::min(it->second.first_seed, k.first_seed);
      it->second.counterexample = it->second.counterexample || k.counterexample;
    }
  totals.by_kind = explore::kinds_in_summary_order(kinds);
  const std::vector<finding_kind>& order = totals.by_kind;

  // Expected violations by variant, each shown first by the least seed any shard saw break it.
  std::map<std::string, explore::expected_violation> expected;
  for (const shard& s : shards)
    for (const explore::expected_violation& e : s.summary.expected_violations) {
      auto [it, inserted] = expected.emplace(e.variant, e);
      if (inserted) continue;
      auto& mine = it->second.shown_first_by_seed;
      if (!mine || (e.shown_first_by_seed && *e.shown_first_by_seed < *mine)) mine = e.shown_first_by_seed;
    }
  for (const auto& [variant, e] : expected) sj.expected_violations.push_back(e);

  // The first findings in seed order, from every shard's first.
  std::uint64_t findings_total = 0;
  for (const shard& s : shards) {
    for (const explore::finding& f : s.summary.findings) sj.findings.push_back(f);
    findings_total = add(findings_total, s.findings_total, s.file, "/findings_omitted");
  }
  std::sort(sj.findings.begin(), sj.findings.end(),
            [](const explore::finding& x, const explore::finding& y) { return x.seed < y.seed; });
  if (sj.findings.size() > explore::findings_listed_max) sj.findings.resize(explore::findings_listed_max);
  sj.findings_omitted = findings_total - sj.findings.size();

  // The shrinks the search as one would make: of the first K kinds, each from the shard of its first seed.
  const std::uint64_t k_max = shrink_max.value_or(a.merge.shrink_max);
  bool failed = false;
  for (std::size_t i = 0; a.merge.shrink && i < order.size() && i < k_max; ++i) {
    const finding_kind& k = order[i];
    const shard& s = shards[k.first_seed % a.count];
    const explore::shrunk_entry* found = nullptr;
    for (const explore::shrunk_entry& e : s.summary.shrunk)
      if (e.seed == k.first_seed && e.variant == k.variant && e.invariant == k.invariant) found = &e;
    if (!found)
      throw input_error{s.file, "/shrunk: no shrink of seed " + std::to_string(k.first_seed) + " (" +
                                    (k.variant.empty() ? std::string() : "variant " + k.variant + ", ") +
                                    "invariant " + k.invariant + "), which the search as one would shrink as its kind " + std::to_string(i + 1) +
                                    " of --shrink-max " + std::to_string(k_max) +
                                    "; run the shards with a larger --shrink-max (up to 1000) and give merge the "
                                    "--shrink-max of the search as one"};
    shrink_entry se;
    se.entry = *found;
    se.entry.counterexample = k.counterexample;  // over all the shards, as the search as one counts it
    // Each file moved to the merge's folder; the scenarios are taken from beside the shard's summary.
    const auto moved = [&](const std::string& named) { return (fs::path(dir) / fs::path(named).filename()).string(); };
    se.explored_from = beside(s.file, se.entry.explored_scenario);
    se.entry.explored_scenario = moved(se.entry.explored_scenario);
    se.entry.explored_report = moved(se.entry.explored_report);
    if (se.entry.minimal_scenario) {
      se.minimal_from = beside(s.file, *se.entry.minimal_scenario);
      se.entry.minimal_scenario = moved(*se.entry.minimal_scenario);
      se.entry.minimal_report = moved(*se.entry.minimal_report);
    }
    if (se.entry.failed()) failed = true;
    sj.shrunk.push_back(se.entry);
    out.shrinks.push_back(std::move(se));
  }

  // The verdict, in explore's words and order (explore.cpp's reasons_not_as_expected).
  std::vector<std::string>& why = out.why;
  if (totals.seeds_with_counterexample != 0)
    why.push_back(std::to_string(totals.seeds_with_counterexample) +
                  " seeds broke an invariant their expectation does not allow");
  if (totals.errors != 0) why.push_back(std::to_string(totals.errors) + " seeds ended in an internal error");
  if (totals.seeds_inconclusive != 0) {
    std::optional<std::pair<std::uint64_t, std::string>> first_cut;
    for (const shard& s : shards)
      if (s.merge.first_inconclusive && (!first_cut || s.merge.first_inconclusive->first < first_cut->first))
        first_cut = s.merge.first_inconclusive;
    why.push_back(std::to_string(totals.seeds_inconclusive) +
                  " seeds could not finish (inconclusive: a limit cut the run, so it judged nothing it did not reach; "
                  "the first is seed " + std::to_string(first_cut ? first_cut->first : 0) + ", " +
                  (first_cut ? first_cut->second : std::string("?")) + ", replay: " +
                  replay_of(sj.scenario.file, first_cut ? first_cut->first : 0) + ")");
  }
  for (const auto& [variant, e] : expected)
    if (!e.shown_first_by_seed)
      why.push_back("no seed showed the violation expected" + (variant.empty() ? "" : " of " + variant));
  if (failed) why.push_back("a minimal scenario did not reproduce its violation");
  out.rc = why.empty() ? exit_as_expected : exit_not_expected;

  // The evidence of the search as one.
  std::map<std::string, reports::evidence> by_variant;
  for (const shard& s : shards) {
    try {
      sj.evidence.merge(s.summary.evidence);
      for (const explore::variant_evidence& v : s.summary.evidence_by_variant) by_variant[v.variant].merge(v.ev);
    } catch (const reports::evidence_error& e) {
      throw input_error{s.file, "/evidence" + e.path + ": " + e.what()};
    }
  }
  for (const auto& [variant, v] : by_variant) sj.evidence_by_variant.push_back(explore::variant_evidence{variant, v});
  sj.exit = explore::exit_record{out.rc, why};
  return out;
}

void write_or_throw(const std::string& path, const std::string& bytes) {
  if (const auto why = write_output(path, bytes)) throw input_error{path, *why};
}

// A shard's scenario file written at `path`, and the report `admitsim run` writes for it there, as
// the search as one writes them (explore.cpp's write_scenario_and_report): the report names `path`.
// Returns the scenario as it reads back.
scenario::scenario write_scenario_and_report(const std::string& from, const std::string& path,
                                             const std::string& report_path) {
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
  return loaded;
}

// --confirm: each shrink of the merged summary run on a real redis-server, one after another, as explore
// confirms its own (explore.cpp's confirm_findings); its confirmation goes into its summary entry and a
// line of stderr. `scenarios[i]` is the file shrink i confirms, as it reads back. An interruption marks
// the summary incomplete and the merge not as expected, in explore's words.
std::vector<std::string> confirm_shrinks(merged& m, std::vector<std::pair<std::string, scenario::scenario>>& scenarios,
                                         confirm_settings settings) {
  ADMIT_ASSERT(scenarios.size() == m.summary.shrunk.size(), "one file to confirm a shrink");
  settings.start();
  bool interrupted = false;
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    explore::shrunk_entry& e = m.summary.shrunk[i];
    const auto& [path, sc] = scenarios[i];
    e.confirmation = confirm_on_redis(sc, e.variant, e.invariant, settings);
    e.confirmed_scenario = path;
    if (e.confirmation->interrupted) interrupted = true;
    lines.push_back("  seed " + std::to_string(e.seed) + variant_label(e.variant) + " broke " + e.invariant + " (" +
                    e.confirmation->words() + "): " + path + ", time scale " + e.confirmation->scale_text() + ": " +
                    e.confirmation->why());
  }
  if (!interrupted) return lines;
  print_error("merge", "interrupted (SIGINT or SIGTERM) while confirming on a real redis-server: the summary marks "
                       "the confirmations cut (\"interrupted\": true) and says \"complete\": false");
  m.summary.seeds.complete = false;
  m.why.insert(m.why.begin(), "interrupted by SIGINT or SIGTERM while confirming on a real redis-server");
  m.rc = exit_not_expected;
  m.summary.exit = explore::exit_record{m.rc, m.why};
  return lines;
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
    confirm_.add_to(sub_, "each shrunk counterexample the merged summary lists (its minimal scenario when it "
                          "reproduced, else the seed's explored one), as explore --confirm does,");
    sub_->add_flag("--quiet,-q", quiet_, "No summary line on stderr");
  }

  int run() const override {
    std::optional<std::uint64_t> shrink_max;
    if (shrink_max_given_->count() != 0) shrink_max = parse_number("--shrink-max", shrink_max_, 0, 1'000);
    const std::optional<confirm_settings> confirm = confirm_.read();
    if (files_.size() > shards_max)
      throw input_error{"merge", "expected at most " + std::to_string(shards_max) + " summaries, got " +
                                       std::to_string(files_.size())};
    std::vector<shard> shards;
    for (const auto& f : files_) shards.push_back(read_shard(f));
    if (shrink_max && *shrink_max > shards.front().merge.shrink_max)
      throw input_error{"--shrink-max", "expected at most " + std::to_string(shards.front().merge.shrink_max) +
                                            ", the shards' --shrink-max, got " + std::to_string(*shrink_max)};
    if (confirm && !shards.front().merge.shrink)
      throw input_error{"--confirm", "expected shards that shrank: they ran with --no-shrink, so no counterexample "
                                     "file was written to confirm; run admitsim confirm on a seed's scenario or report"};
    const std::string name = shards.front().summary.scenario.name;
    const std::string summary_path = (fs::path(out_dir_) / (name + "-explore.json")).string();
    merged m = merge_shards(shards, out_dir_, shrink_max);
    for (const shard& s : shards)
      if (same_output(s.file, summary_path))
        throw input_error{summary_path, "is a shard's summary given to merge: give merge another --out"};
    dir_lock lock;
    if (auto why = prepare_output_dir(out_dir_)) throw input_error{out_dir_, *why};
    if (auto why = lock.lock(out_dir_)) throw input_error{out_dir_, *why};
    if (auto why = check_output(summary_path)) throw input_error{summary_path, *why};
    std::vector<std::pair<std::string, scenario::scenario>> to_confirm;  // with --confirm: each shrink's file
    for (const shrink_entry& se : m.shrinks) {
      scenario::scenario explored =
          write_scenario_and_report(se.explored_from, se.entry.explored_scenario, se.entry.explored_report);
      std::optional<scenario::scenario> minimal;
      if (!se.minimal_from.empty())
        minimal = write_scenario_and_report(se.minimal_from, *se.entry.minimal_scenario, *se.entry.minimal_report);
      if (!confirm) continue;
      if (minimal && se.entry.reproduced) to_confirm.emplace_back(*se.entry.minimal_scenario, std::move(*minimal));
      else to_confirm.emplace_back(se.entry.explored_scenario, std::move(explored));
    }
    std::vector<std::string> confirmed;  // a line of stderr each
    if (confirm && !to_confirm.empty()) {
      catch_sigint();
      confirmed = confirm_shrinks(m, to_confirm, *confirm);
    }
    write_or_throw(summary_path, m.summary.render());
    if (!quiet_) {
      const explore::totals_record& t = m.summary.totals;
      std::fprintf(stderr,
                   "merge: %zu shards of %s, %llu seeds: %llu with violations, %llu with counterexamples, %llu "
                   "errors, %zu shrinks -> %s\n",
                   shards.size(), name.c_str(), static_cast<unsigned long long>(m.summary.seeds.ran),
                   static_cast<unsigned long long>(t.seeds_with_violation),
                   static_cast<unsigned long long>(t.seeds_with_counterexample),
                   static_cast<unsigned long long>(t.errors), m.shrinks.size(), summary_path.c_str());
      for (const std::string& l : confirmed) std::fprintf(stderr, "%s\n", l.c_str());
      for (const auto& w : m.why) std::fprintf(stderr, "  not as expected: %s\n", w.c_str());
    }
    return m.rc;
  }

 private:
  std::vector<std::string> files_;
  std::string out_dir_ = "out/explore";
  std::string shrink_max_;
  CLI::Option* shrink_max_given_ = nullptr;
  confirm_options confirm_;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<verb> make_merge_verb(CLI::App& app) { return std::make_unique<merge_verb>(app); }

}  // namespace admit::cli
