#include "sim/explore/search_summary.hpp"

#include <algorithm>

#include "gate/admit_assert.hpp"

namespace admit::explore {

namespace {

using json = nlohmann::ordered_json;
using codec::codec_error;
using codec::or_null;
using codec::read_array;
using codec::read_bool;
using codec::read_field;
using codec::read_i64;
using codec::read_list;
using codec::read_object;
using codec::read_string;
using codec::read_u64;
using codec::read_u64_or_null;
using codec::shown;

// The evidence under `path`, its errors (reports::evidence_error) as a codec_error below it.
reports::evidence read_evidence(const json& j, const std::string& path) {
  try {
    return reports::evidence::from_json(j);
  } catch (const reports::evidence_error& e) {
    throw codec_error(path + e.path, e.what());
  }
}

}  // namespace

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

json scenario_ref::to_json() const {
  json j;
  j["name"] = name;
  j["file"] = file;
  j["sha256"] = sha256;
  return j;
}

scenario_ref scenario_ref::from_json(const json& j, const std::string& path) {
  return scenario_ref{read_string(j, path, "name"), read_string(j, path, "file"), read_string(j, path, "sha256")};
}

json seeds_record::to_json() const {
  json j;
  j["first"] = first;
  j["count"] = or_null(count);
  j["shard"] = std::to_string(shard_index) + "/" + std::to_string(shard_count);
  j["ran"] = ran;
  j["last"] = or_null(last);
  if (!complete) j["complete"] = false;
  if (until_bound) {
    json u;
    u["bound_ppm"] = until_bound->bound_ppm;
    u["clean_seeds_needed"] = until_bound->clean_seeds_needed;
    u["reached"] = until_bound->reached;
    j["until_bound"] = std::move(u);
  }
  return j;
}

seeds_record seeds_record::from_json(const json& j, const std::string& path) {
  seeds_record s;
  s.first = read_u64(j, path, "first");
  s.count = read_u64_or_null(j, path, "count");
  const std::string shard = read_string(j, path, "shard");
  const auto parsed = parse_shard(shard);
  if (!parsed) throw codec_error(path + "/shard", "expected I/N with 0 <= I < N, got " + shown(json(shard)));
  std::tie(s.shard_index, s.shard_count) = *parsed;
  s.ran = read_u64(j, path, "ran");
  s.last = read_u64_or_null(j, path, "last");
  if (j.contains("complete")) {
    if (read_bool(j, path, "complete"))
      throw codec_error(path + "/complete", "expected false (a finished search writes no \"complete\"), got true");
    s.complete = false;
  }
  if (j.contains("until_bound")) {
    const std::string p = path + "/until_bound";
    const json& u = read_object(j, path, "until_bound");
    s.until_bound = until_bound_record{read_u64(u, p, "bound_ppm"), read_u64(u, p, "clean_seeds_needed"),
                                       read_bool(u, p, "reached")};
  }
  return s;
}

void finding_kind::add_cause(const std::string& kind, const kind_cause& c) {
  ADMIT_ASSERT(c.seeds >= 1, "a cause named in at least one seed");
  auto [it, inserted] = causes.emplace(kind, c);
  if (inserted) return;
  it->second.seeds += c.seeds;
  if (c.first_seed < it->second.first_seed) {
    it->second.first_seed = c.first_seed;
    it->second.example = c.example;
  }
}

std::vector<std::pair<std::string, kind_cause>> finding_kind::causes_in_order() const {
  std::vector<std::pair<std::string, kind_cause>> out(causes.begin(), causes.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.second.seeds != b.second.seeds) return a.second.seeds > b.second.seeds;
    return a.second.first_seed < b.second.first_seed;
  });
  return out;
}

json finding_kind::to_json() const {
  json j;
  j["variant"] = variant;
  j["invariant"] = invariant;
  j["counterexample"] = counterexample;
  j["seeds"] = seeds;
  j["first_seed"] = first_seed;
  json cj = json::array();
  for (const auto& [kind, c] : causes_in_order())
    cj.push_back(json{{"kind", kind}, {"seeds", c.seeds}, {"first_seed", c.first_seed}, {"example", c.example}});
  j["causes"] = std::move(cj);
  return j;
}

finding_kind finding_kind::from_json(const json& j, const std::string& path) {
  finding_kind k;
  k.variant = read_string(j, path, "variant");
  k.invariant = read_string(j, path, "invariant");
  k.counterexample = read_bool(j, path, "counterexample");
  k.seeds = read_u64(j, path, "seeds");
  k.first_seed = read_u64(j, path, "first_seed");
  const auto causes = read_list(j, path, "causes", [&](const json& c, const std::string& cp) {
    const std::string kind = read_string(c, cp, "kind");
    kind_cause kc;
    kc.seeds = read_u64(c, cp, "seeds");
    if (kc.seeds < 1 || kc.seeds > k.seeds)
      throw codec_error(cp + "/seeds", "expected 1 to the kind's " + std::to_string(k.seeds) + " seeds, got " +
                                           std::to_string(kc.seeds));
    kc.first_seed = read_u64(c, cp, "first_seed");
    if (kc.first_seed < k.first_seed)
      throw codec_error(cp + "/first_seed", "expected a seed at or after the kind's first, " + std::to_string(k.first_seed));
    kc.example = read_string(c, cp, "example");
    return std::make_pair(kind, kc);
  });
  for (std::size_t i = 0; i < causes.size(); ++i)
    if (!k.causes.emplace(causes[i].first, causes[i].second).second)
      throw codec_error(path + "/causes/" + std::to_string(i) + "/kind", "\"" + causes[i].first + "\" twice");
  return k;
}

std::vector<finding_kind> kinds_in_summary_order(const finding_kind_map& kinds) {
  std::vector<finding_kind> order;
  order.reserve(kinds.size());
  for (const auto& [key, k] : kinds) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [](const finding_kind& a, const finding_kind& b) {
    if (a.counterexample != b.counterexample) return a.counterexample;
    return a.first_seed < b.first_seed;
  });
  return order;
}

json totals_record::to_json() const {
  json j;
  j["runs"] = runs;
  j["seeds_with_violation"] = seeds_with_violation;
  j["seeds_with_counterexample"] = seeds_with_counterexample;
  j["errors"] = errors;
  j["seeds_inconclusive"] = seeds_inconclusive;
  if (distinct_orderings) {
    json orders = json::object();
    for (const auto& [variant, n] : *distinct_orderings) orders[variant] = n;
    j["distinct_orderings"] = std::move(orders);
    // Past the bound the counts are lower bounds (docs/limits.md); below it the key is absent.
    if (distinct_orderings_capped) j["distinct_orderings_capped"] = true;
  }
  json by = json::array();
  for (const finding_kind& k : by_kind) by.push_back(k.to_json());
  j["by_kind"] = std::move(by);
  return j;
}

totals_record totals_record::from_json(const json& j, const std::string& path) {
  totals_record t;
  t.runs = read_u64(j, path, "runs");
  t.seeds_with_violation = read_u64(j, path, "seeds_with_violation");
  t.seeds_with_counterexample = read_u64(j, path, "seeds_with_counterexample");
  t.errors = read_u64(j, path, "errors");
  t.seeds_inconclusive = read_u64(j, path, "seeds_inconclusive");
  if (j.contains("distinct_orderings")) {
    const json& o = read_object(j, path, "distinct_orderings");
    t.distinct_orderings.emplace();
    for (const auto& [variant, n] : o.items()) {
      (void)n;
      t.distinct_orderings->emplace_back(variant, read_u64(o, path + "/distinct_orderings", variant.c_str()));
    }
    if (j.contains("distinct_orderings_capped")) {
      if (!read_bool(j, path, "distinct_orderings_capped"))
        throw codec_error(path + "/distinct_orderings_capped", "expected true (written only when capped), got false");
      t.distinct_orderings_capped = true;
    }
  } else if (j.contains("distinct_orderings_capped")) {
    throw codec_error(path + "/distinct_orderings_capped", "expected only beside distinct_orderings");
  }
  t.by_kind = read_list(j, path, "by_kind", finding_kind::from_json);
  return t;
}

json variant_evidence::to_json() const {
  json j;
  j["variant"] = variant;
  json e = ev.to_json();  // kept: the loop reads into it
  for (auto& [k, v] : e.items()) j[k] = std::move(v);
  return j;
}

variant_evidence variant_evidence::from_json(const json& j, const std::string& path) {
  variant_evidence v;
  v.variant = read_string(j, path, "variant");
  v.ev = read_evidence(j, path);
  return v;
}

json expected_violation::to_json() const {
  json j;
  j["variant"] = variant;
  j["verdict"] = verdict;
  j["violated"] = violated;
  j["shown_first_by_seed"] = or_null(shown_first_by_seed);
  return j;
}

expected_violation expected_violation::from_json(const json& j, const std::string& path) {
  expected_violation e;
  e.variant = read_string(j, path, "variant");
  e.verdict = read_string(j, path, "verdict");
  e.violated = codec::read_strings(j, path, "violated");
  e.shown_first_by_seed = read_u64_or_null(j, path, "shown_first_by_seed");
  return e;
}

break_record break_record::of(const invariant_break& b) { return break_record{b.name, b.at_ns, b.detail, b.causes}; }

json break_record::to_json() const {
  json j;
  j["invariant"] = invariant;
  j["at_ns"] = at_ns;
  j["detail"] = detail;
  // Why, as the run's report says it (check::invariant_result::causes): most first.
  json cj = json::array();
  for (const check::cause_count& c : causes) cj.push_back(json{{"kind", c.kind}, {"count", c.count}, {"example", c.example}});
  j["causes"] = std::move(cj);
  return j;
}

break_record break_record::from_json(const json& j, const std::string& path) {
  break_record b;
  b.invariant = read_string(j, path, "invariant");
  b.at_ns = read_i64(j, path, "at_ns");
  b.detail = read_string(j, path, "detail");
  b.causes = read_list(j, path, "causes", [](const json& c, const std::string& cp) {
    return check::cause_count{read_string(c, cp, "kind"), read_u64(c, cp, "count"), read_string(c, cp, "example")};
  });
  return b;
}

finding_run finding_run::of(const run_outcome& r) {
  finding_run f;
  f.variant = r.variant;
  f.expected = r.expected_verdict;
  f.counterexample = r.counterexample;
  for (const auto& b : r.broken) f.broken.push_back(break_record::of(b));
  f.run_status = r.run_status;
  f.inconclusive = r.inconclusive;
  f.requests = r.requests;
  f.portal_inflight_max = r.portal_inflight_max;
  return f;
}

json finding_run::to_json() const {
  json j;
  j["variant"] = variant;
  j["expected"] = expected;
  j["counterexample"] = counterexample;
  json b = json::array();
  for (const auto& x : broken) b.push_back(x.to_json());
  j["broken"] = std::move(b);
  j["run_status"] = run_status;
  if (inconclusive) j["inconclusive"] = *inconclusive;
  j["requests"] = requests;
  j["portal_inflight_max"] = portal_inflight_max;
  return j;
}

finding_run finding_run::from_json(const json& j, const std::string& path) {
  finding_run f;
  f.variant = read_string(j, path, "variant");
  f.expected = read_string(j, path, "expected");
  f.counterexample = read_bool(j, path, "counterexample");
  f.broken = read_list(j, path, "broken", break_record::from_json);
  f.run_status = read_string(j, path, "run_status");
  if (j.contains("inconclusive")) f.inconclusive = read_string(j, path, "inconclusive");
  f.requests = read_u64(j, path, "requests");
  f.portal_inflight_max = read_i64(j, path, "portal_inflight_max");
  return f;
}

finding finding::of(const seed_outcome& o) {
  finding f;
  f.seed = o.seed;
  f.swarm = swarm_record::of(o.swarm, o.faults_from_file);
  f.swarm.faults_drawn = o.faults_drawn;
  if (o.plan && !o.plan->origin.empty()) {
    f.origin = o.plan->origin;
    f.run_seed = o.plan->run_seed;
  }
  f.error = o.error;
  for (const auto& r : o.runs) f.runs.push_back(finding_run::of(r));
  return f;
}

json finding::to_json() const {
  json j;
  j["seed"] = seed;
  j["swarm"] = swarm.to_json();
  if (!origin.empty()) {
    j["origin"] = origin;
    j["run_seed"] = run_seed;
  }
  if (error) j["error"] = *error;
  json r = json::array();
  for (const auto& x : runs) r.push_back(x.to_json());
  j["runs"] = std::move(r);
  return j;
}

finding finding::from_json(const json& j, const std::string& path) {
  finding f;
  f.seed = read_u64(j, path, "seed");
  f.swarm = swarm_record::from_json(read_object(j, path, "swarm"), path + "/swarm", true);
  if (j.contains("origin")) {
    f.origin = read_string(j, path, "origin");
    if (f.origin.empty()) throw codec_error(path + "/origin", "expected a guided seed's origin, got \"\"");
    f.run_seed = read_u64(j, path, "run_seed");
  }
  if (j.contains("error")) f.error = read_string(j, path, "error");
  f.runs = read_list(j, path, "runs", finding_run::from_json);
  return f;
}

json size_change::to_json() const {
  json j;
  j["before"] = before;
  j["after"] = after;
  j["removed"] = before - after;
  return j;
}

size_change size_change::from_json(const json& j, const std::string& path) {
  size_change s{read_i64(j, path, "before"), read_i64(j, path, "after")};
  const json& removed = read_field(j, path, "removed");
  if (!removed.is_number_integer() || removed.get<std::int64_t>() != s.before - s.after)
    throw codec_error(path + "/removed", "expected " + std::to_string(s.before - s.after) + " (before - after), got " +
                                             shown(removed));
  return s;
}

json shrunk_entry::to_json() const {
  json j;
  j["seed"] = seed;
  j["variant"] = variant;
  j["invariant"] = invariant;
  j["counterexample"] = counterexample;
  j["explored_scenario"] = explored_scenario;
  j["explored_report"] = explored_report;
  j["minimal_scenario"] = or_null(minimal_scenario);
  j["minimal_report"] = or_null(minimal_report);
  j["reproduced"] = reproduced;
  j["needs_perturbed_order"] = needs_perturbed_order;
  j["replay"] = replay;
  j["faults"] = faults.to_json();
  j["requests"] = requests.to_json();
  j["workers"] = workers.to_json();
  j["shrink_runs"] = shrink_runs;
  j["budget_exhausted"] = budget_exhausted;
  j["rebased_by_ns"] = rebased_by_ns;
  j["violation_at_ns"] = violation_at_ns;
  j["detail"] = detail;
  if (confirmation) {
    json c = json::object();
    c["scenario"] = confirmed_scenario;
    const json record = confirmation->to_json();  // kept: the loop reads into it
    for (const auto& [key, value] : record.items()) c[key] = value;
    j["confirmation"] = std::move(c);
  }
  return j;
}

shrunk_entry shrunk_entry::from_json(const json& j, const std::string& path) {
  shrunk_entry s;
  s.seed = read_u64(j, path, "seed");
  s.variant = read_string(j, path, "variant");
  s.invariant = read_string(j, path, "invariant");
  s.counterexample = read_bool(j, path, "counterexample");
  s.explored_scenario = read_string(j, path, "explored_scenario");
  s.explored_report = read_string(j, path, "explored_report");
  s.minimal_scenario = codec::read_string_or_null(j, path, "minimal_scenario");
  s.minimal_report = codec::read_string_or_null(j, path, "minimal_report");
  if (s.minimal_scenario.has_value() != s.minimal_report.has_value())
    throw codec_error(path + "/minimal_report", "expected null exactly when minimal_scenario is null");
  s.reproduced = read_bool(j, path, "reproduced");
  s.needs_perturbed_order = read_bool(j, path, "needs_perturbed_order");
  s.replay = read_string(j, path, "replay");
  s.faults = size_change::from_json(read_object(j, path, "faults"), path + "/faults");
  s.requests = size_change::from_json(read_object(j, path, "requests"), path + "/requests");
  s.workers = size_change::from_json(read_object(j, path, "workers"), path + "/workers");
  s.shrink_runs = read_u64(j, path, "shrink_runs");
  s.budget_exhausted = read_bool(j, path, "budget_exhausted");
  s.rebased_by_ns = read_i64(j, path, "rebased_by_ns");
  s.violation_at_ns = read_i64(j, path, "violation_at_ns");
  s.detail = read_string(j, path, "detail");
  if (j.contains("confirmation")) {
    const std::string p = path + "/confirmation";
    json c = read_object(j, path, "confirmation");
    s.confirmed_scenario = read_string(c, p, "scenario");
    c.erase("scenario");
    s.confirmation = reports::confirmation_record::from_json(c, p);
  }
  return s;
}

json exit_record::to_json() const {
  json j;
  j["code"] = code;
  j["why"] = why;
  return j;
}

exit_record exit_record::from_json(const json& j, const std::string& path) {
  exit_record e;
  const std::uint64_t code = read_u64(j, path, "code");
  if (code > 1) throw codec_error(path + "/code", "expected 0 or 1, got " + std::to_string(code));
  e.code = static_cast<int>(code);
  e.why = codec::read_strings(j, path, "why");
  return e;
}

json merge_record::to_json() const {
  json j;
  j["shrink"] = shrink;
  j["shrink_max"] = shrink_max;
  j["shrink_runs"] = shrink_runs;
  j["first_inconclusive"] = codec::seed_and(first_inconclusive, "reason");
  return j;
}

merge_record merge_record::from_json(const json& j, const std::string& path) {
  merge_record m;
  m.shrink = read_bool(j, path, "shrink");
  m.shrink_max = read_u64(j, path, "shrink_max");
  m.shrink_runs = read_u64(j, path, "shrink_runs");
  m.first_inconclusive = codec::read_seed_and(j, path, "first_inconclusive", "reason");
  return m;
}

json search_summary::to_json() const {
  json out;
  out["format"] = explore_format;
  out["scenario"] = scenario.to_json();
  out["seeds"] = seeds.to_json();
  out["mode"] = mode;
  out["bounds"] = bounds ? bounds->to_json() : json(nullptr);
  out["totals"] = totals.to_json();
  out["evidence"] = evidence.to_json();
  json by_variant = json::array();
  for (const auto& v : evidence_by_variant) by_variant.push_back(v.to_json());
  out["evidence_by_variant"] = std::move(by_variant);
  json expected = json::array();
  for (const auto& e : expected_violations) expected.push_back(e.to_json());
  out["expected_violations"] = std::move(expected);
  json listed = json::array();
  for (const auto& f : findings) listed.push_back(f.to_json());
  out["findings"] = std::move(listed);
  out["findings_omitted"] = findings_omitted;
  json shrinks = json::array();
  for (const auto& s : shrunk) shrinks.push_back(s.to_json());
  out["shrunk"] = std::move(shrinks);
  out["exit"] = exit.to_json();
  if (merge) out["merge"] = merge->to_json();
  return out;
}

std::string search_summary::render() const { return codec::render_json(to_json()); }

search_summary search_summary::from_json(const json& d) {
  if (!d.is_object()) throw codec_error("", "expected an explore summary (an object of format admitsim-explore/1)");
  const auto format = d.find("format");
  if (format == d.end() || *format != explore_format)
    throw codec_error("/format", "expected \"admitsim-explore/1\" (the summary admitsim explore writes), got " +
                                     (format == d.end() ? std::string("nothing") : shown(*format)));
  search_summary s;
  s.scenario = scenario_ref::from_json(read_object(d, "", "scenario"), "/scenario");
  s.seeds = seeds_record::from_json(read_object(d, "", "seeds"), "/seeds");
  s.mode = read_string(d, "", "mode");
  if (s.mode != "swarm" && s.mode != "plain" && s.mode != "guided" && s.mode != "perturb_ties" && s.mode != "ties_only")
    throw codec_error("/mode", "expected swarm, plain, guided, perturb_ties or ties_only, got " + shown(json(s.mode)));
  if (!read_field(d, "", "bounds").is_null())
    s.bounds = swarm_record::from_json(read_object(d, "", "bounds"), "/bounds", false);
  s.totals = totals_record::from_json(read_object(d, "", "totals"), "/totals");
  s.evidence = read_evidence(read_object(d, "", "evidence"), "/evidence");
  s.evidence_by_variant = read_list(d, "", "evidence_by_variant", variant_evidence::from_json);
  for (std::size_t i = 0; i < s.evidence_by_variant.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (s.evidence_by_variant[k].variant == s.evidence_by_variant[i].variant)
        throw codec_error("/evidence_by_variant/" + std::to_string(i) + "/variant",
                          "\"" + s.evidence_by_variant[i].variant + "\" twice");
  s.expected_violations = read_list(d, "", "expected_violations", expected_violation::from_json);
  if (read_array(d, "", "findings").size() > findings_listed_max)
    throw codec_error("/findings", "expected at most " + std::to_string(findings_listed_max) + " seeds, got " +
                                       std::to_string(d["findings"].size()));
  s.findings = read_list(d, "", "findings", finding::from_json);
  for (std::size_t i = 1; i < s.findings.size(); ++i)
    if (s.findings[i].seed <= s.findings[i - 1].seed)
      throw codec_error("/findings/" + std::to_string(i) + "/seed", "expected the seeds in ascending order");
  s.findings_omitted = read_u64(d, "", "findings_omitted");
  if (s.findings_omitted != 0 && s.findings.size() != findings_listed_max)
    throw codec_error("/findings_omitted",
                      "expected 0 with fewer than " + std::to_string(findings_listed_max) + " findings listed");
  s.shrunk = read_list(d, "", "shrunk", shrunk_entry::from_json);
  s.exit = exit_record::from_json(read_object(d, "", "exit"), "/exit");
  if (d.contains("merge")) s.merge = merge_record::from_json(read_object(d, "", "merge"), "/merge");
  return s;
}

}  // namespace admit::explore
