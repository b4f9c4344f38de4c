#include "reports/matrix_report.hpp"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/html_text.hpp"
#include "sim/codec/json_codec.hpp"

namespace admit::reports {

// The field readers every from_json shares (sim/codec/json_codec.hpp).
using namespace admit::codec;

namespace {

using json = nlohmann::ordered_json;

std::string html_esc(const std::string& s) { return html_escape(s); }

// A cell of a Markdown table: no pipe or newline may end it early.
std::string md_esc(const std::string& s) {
  std::string o;
  for (const char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n' || c == '\r') o += ' ';
    else o += c;
  }
  return o;
}

// `ppm` parts per million as a percentage for people: "44%", "0.5%", "100%".
std::string percent(std::uint64_t ppm) {
  if (ppm == 0) return "0%";
  if (ppm >= 10'000) return std::to_string((ppm + 5'000) / 10'000) + "%";
  const std::uint64_t tenths = (ppm + 500) / 1'000;
  return tenths == 0 ? "<0.1%" : std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

json overshoot_json(const matrix_overshoot& o) {
  json j;
  j["invariant"] = o.invariant;
  j["value"] = o.value;
  j["bound"] = o.bound;
  j["over_by"] = o.value - o.bound;
  j["seed"] = o.seed;
  return j;
}

constexpr cell_status cell_statuses[] = {cell_status::holds, cell_status::breaks, cell_status::inconclusive,
                                         cell_status::error};

// A cell's outcome in words that say what it rests on: "held in 300 seeds", "breaks in 7 of 16
// seeds", "inconclusive", "error".
std::string status_words(const matrix_cell& c) {
  switch (c.status) {
    case cell_status::holds: return "held in " + count_text(c.ev.seeds) + (c.ev.seeds == 1 ? " seed" : " seeds");
    case cell_status::breaks:
      return "breaks in " + count_text(c.seeds_violating) + " of " + count_text(c.seeds_run) + " seeds";
    case cell_status::inconclusive: return "inconclusive";
    case cell_status::error: return "error";
  }
  return "?";
}

// One line for a cell: "breaks in 7 of 16 seeds, worst +2 over 4 (...), 12.5s over the cap at worst".
std::string cell_line(const matrix_cell& c) {
  std::string o = status_words(c);
  if (c.status == cell_status::inconclusive || c.status == cell_status::error)
    o += " (" + std::to_string(c.seeds_violating) + " of " + std::to_string(c.seeds_run) + " seeds broke)";
  if (c.worst_overshoot)
    o += ", worst +" + std::to_string(c.worst_overshoot->value - c.worst_overshoot->bound) + " over " +
         std::to_string(c.worst_overshoot->bound) + " (" + c.worst_overshoot->invariant + ")";
  if (c.over_cap_worst_ns > 0) o += ", " + short_duration(c.over_cap_worst_ns) + " over the cap at worst";
  if (c.seeds_inconclusive != 0) o += ", " + std::to_string(c.seeds_inconclusive) + " inconclusive";
  if (c.seeds_error != 0) o += ", " + std::to_string(c.seeds_error) + " errors";
  if (c.seeds_not_run != 0) o += ", " + std::to_string(c.seeds_not_run) + " not run (stopped)";
  o += ": " + c.ev.statement() + "; faults injected: " + c.ev.faults_text();
  return o;
}

constexpr const char* matrix_css = R"(:root{--ink:#1b2230;--muted:#5b6473;--line:#d9dde5;--pass:#1e7b3c;--bad:#c0262d;--inc:#8a6d00}
body{margin:0;background:#f6f7f9;color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:1400px;margin:0 auto;padding:18px 22px}
h1{font-size:21px;margin:4px 0}h2{font-size:16px;margin:22px 0 6px}
.muted,.note{color:var(--muted);font-size:12.5px}
code{font-size:12.5px;background:#eef0f4;padding:0 3px;border-radius:3px}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0;background:#fff}
th,td{padding:5px 8px;border:1px solid var(--line);text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600;background:#fbfcfd}
td.cell{min-width:120px}
td.holds{background:#e7f4ea}td.breaks{background:#fbe3e4}td.inconclusive{background:#fbf1d0}td.error{background:#ece4f7}
.status{font-weight:700}.holds .status{color:var(--pass)}.breaks .status{color:var(--bad)}
.inconclusive .status{color:var(--inc)}.error .status{color:#6b3fa0}
.unmet{outline:3px solid var(--bad);outline-offset:-3px}
.fig{display:block;font-variant-numeric:tabular-nums}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:14px;height:10px;margin-right:5px;border:1px solid var(--line);vertical-align:-1px}
section.cell-detail{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px;margin:10px 0}
section.cell-detail h3{font-size:14px;margin:0 0 4px}
)";

}  // namespace

const char* to_string(cell_status s) {
  switch (s) {
    case cell_status::holds: return "holds";
    case cell_status::breaks: return "breaks";
    case cell_status::inconclusive: return "inconclusive";
    case cell_status::error: return "error";
  }
  return "?";
}

std::string confirmation_words(const matrix_cell& c) {
  if (!c.counterexample || !c.counterexample->confirmation) return "";
  return "broke (" + c.counterexample->confirmation->words() + ")";
}

std::uint64_t matrix_cell::violation_rate_ppm() const {
  if (seeds_run == 0) return 0;
  // seeds_violating <= seeds_run <= 10^6 (the matrix file's bound on seeds), so the product fits.
  return seeds_violating * 1'000'000 / seeds_run;
}

json matrix_cell::to_json() const {
  const matrix_cell& c = *this;
  json j;
  j["design"] = c.design;
  j["fault"] = c.fault;
  j["status"] = to_string(c.status);
  j["expected"] = or_null(c.expected);
  j["as_expected"] = c.as_expected;
  json s;
  s["run"] = c.seeds_run;
  s["violating"] = c.seeds_violating;
  s["inconclusive"] = c.seeds_inconclusive;
  s["error"] = c.seeds_error;
  s["not_run"] = c.seeds_not_run;
  j["seeds"] = std::move(s);
  j["violation_rate_ppm"] = c.violation_rate_ppm();
  j["evidence"] = c.ev.to_json(false);  // the buckets never hit, not every bucket's seeds
  j["worst_overshoot"] = c.worst_overshoot ? overshoot_json(*c.worst_overshoot) : json(nullptr);
  json t;
  t["worst_ns"] = c.over_cap_worst_ns;
  t["worst_seed"] = or_null(c.over_cap_worst_seed);
  t["total_ns"] = c.over_cap_total_ns;
  j["time_over_cap"] = std::move(t);
  json broken = json::array();
  for (const auto& [name, n] : c.broken) {
    json b;
    b["invariant"] = name;
    b["seeds"] = n;
    broken.push_back(std::move(b));
  }
  j["broken"] = std::move(broken);
  json causes = json::array();
  for (const auto& k : c.causes) {
    json kj;
    kj["kind"] = k.kind;
    kj["count"] = k.count;
    kj["example"] = k.example;
    causes.push_back(std::move(kj));
  }
  j["causes"] = std::move(causes);
  if (c.first_violation) {
    const auto& v = *c.first_violation;
    json vj;
    vj["seed"] = v.seed;
    vj["invariant"] = v.invariant;
    vj["at_ns"] = v.at_ns;
    vj["detail"] = v.detail;
    if (v.cause) {
      json cj;
      cj["kind"] = v.cause->first;
      cj["detail"] = v.cause->second;
      vj["cause"] = std::move(cj);
    } else {
      vj["cause"] = nullptr;
    }
    j["first_violation"] = std::move(vj);
  } else {
    j["first_violation"] = nullptr;
  }
  j["first_inconclusive"] = seed_and(c.first_inconclusive, "reason");
  j["first_error"] = seed_and(c.first_error, "error");
  if (c.counterexample) {
    const auto& x = *c.counterexample;
    json xj;
    xj["seed"] = x.seed;
    xj["invariant"] = x.invariant;
    xj["shrunk"] = x.shrunk;
    xj["reproduced"] = x.reproduced;
    xj["scenario"] = x.scenario;
    xj["report"] = x.report;
    xj["replay"] = x.replay;
    xj["requests"] = x.requests;
    xj["workers"] = x.workers;
    xj["faults"] = x.faults;
    if (x.confirmation) {
      // The cell's words first, then the confirmation's own keys.
      json cj = json::object();
      cj["words"] = confirmation_words(c);
      const json record = x.confirmation->to_json();  // kept: the loop reads into it
      for (const auto& [key, value] : record.items()) cj[key] = value;
      xj["confirmation"] = std::move(cj);
    }
    j["counterexample"] = std::move(xj);
  } else {
    j["counterexample"] = nullptr;
  }
  return j;
}

matrix_cell matrix_cell::from_json(const json& j, const std::string& path) {
  matrix_cell c;
  c.design = read_string(j, path, "design");
  c.fault = read_string(j, path, "fault");
  const std::string status = read_string(j, path, "status");
  const auto named = std::find_if(std::begin(cell_statuses), std::end(cell_statuses),
                                  [&](cell_status s) { return status == to_string(s); });
  if (named == std::end(cell_statuses))
    throw codec_error(path + "/status", "expected holds, breaks, inconclusive or error, got " + shown(json(status)));
  c.status = *named;
  c.expected = read_string_or_null(j, path, "expected");
  if (c.expected && *c.expected != "holds" && *c.expected != "breaks")
    throw codec_error(path + "/expected", "expected \"holds\", \"breaks\" or null, got " + shown(json(*c.expected)));
  c.as_expected = read_bool(j, path, "as_expected");
  const std::string sp = path + "/seeds";
  const json& s = read_object(j, path, "seeds");
  c.seeds_run = read_u64(s, sp, "run");
  if (c.seeds_run > matrix_seeds_max)
    throw codec_error(sp + "/run", "expected at most " + std::to_string(matrix_seeds_max) + " (a matrix's seeds), got " +
                                       std::to_string(c.seeds_run));
  c.seeds_violating = read_u64(s, sp, "violating");
  if (c.seeds_violating > c.seeds_run)
    throw codec_error(sp + "/violating", "expected at most the " + std::to_string(c.seeds_run) + " seeds run, got " +
                                             std::to_string(c.seeds_violating));
  c.seeds_inconclusive = read_u64(s, sp, "inconclusive");
  c.seeds_error = read_u64(s, sp, "error");
  c.seeds_not_run = read_u64(s, sp, "not_run");
  if (read_u64(j, path, "violation_rate_ppm") != c.violation_rate_ppm())
    throw codec_error(path + "/violation_rate_ppm", "expected " + std::to_string(c.violation_rate_ppm()) +
                                                        " (violating seeds per million run)");
  try {
    c.ev = evidence::from_json(read_object(j, path, "evidence"), false);
  } catch (const evidence_error& e) {
    throw codec_error(path + "/evidence" + e.path, e.what());
  }
  if (!read_field(j, path, "worst_overshoot").is_null()) {
    const std::string p = path + "/worst_overshoot";
    const json& o = read_object(j, path, "worst_overshoot");
    matrix_overshoot w{read_string(o, p, "invariant"), read_i64(o, p, "value"), read_i64(o, p, "bound"), 0};
    const json& over_by = read_field(o, p, "over_by");
    if (!over_by.is_number_integer() || over_by.get<std::int64_t>() != w.value - w.bound)
      throw codec_error(p + "/over_by", "expected " + std::to_string(w.value - w.bound) + " (value - bound), got " +
                                            shown(over_by));
    w.seed = read_u64(o, p, "seed");
    c.worst_overshoot = w;
  }
  const std::string tp = path + "/time_over_cap";
  const json& t = read_object(j, path, "time_over_cap");
  c.over_cap_worst_ns = read_i64(t, tp, "worst_ns");
  c.over_cap_worst_seed = read_u64_or_null(t, tp, "worst_seed");
  c.over_cap_total_ns = read_i64(t, tp, "total_ns");
  c.broken = read_list(j, path, "broken", [](const json& b, const std::string& p) {
    return std::make_pair(read_string(b, p, "invariant"), read_u64(b, p, "seeds"));
  });
  c.causes = read_list(j, path, "causes", [](const json& k, const std::string& p) {
    return matrix_cause{read_string(k, p, "kind"), read_u64(k, p, "count"), read_string(k, p, "example")};
  });
  if (!read_field(j, path, "first_violation").is_null()) {
    const std::string p = path + "/first_violation";
    const json& v = read_object(j, path, "first_violation");
    matrix_violation mv{read_u64(v, p, "seed"), read_string(v, p, "invariant"), read_i64(v, p, "at_ns"),
                        read_string(v, p, "detail"), std::nullopt};
    if (!read_field(v, p, "cause").is_null()) {
      const json& k = read_object(v, p, "cause");
      mv.cause.emplace(read_string(k, p + "/cause", "kind"), read_string(k, p + "/cause", "detail"));
    }
    c.first_violation = std::move(mv);
  }
  c.first_inconclusive = read_seed_and(j, path, "first_inconclusive", "reason");
  c.first_error = read_seed_and(j, path, "first_error", "error");
  if (!read_field(j, path, "counterexample").is_null()) {
    const std::string p = path + "/counterexample";
    const json& x = read_object(j, path, "counterexample");
    matrix_counterexample m;
    m.seed = read_u64(x, p, "seed");
    m.invariant = read_string(x, p, "invariant");
    m.shrunk = read_bool(x, p, "shrunk");
    m.reproduced = read_bool(x, p, "reproduced");
    m.scenario = read_string(x, p, "scenario");
    m.report = read_string(x, p, "report");
    m.replay = read_string(x, p, "replay");
    m.requests = read_u64(x, p, "requests");
    m.workers = read_i64(x, p, "workers");
    m.faults = read_u64(x, p, "faults");
    if (x.contains("confirmation")) {
      const std::string cp = p + "/confirmation";
      json cj = read_object(x, p, "confirmation");
      const std::string words = read_string(cj, cp, "words");
      cj.erase("words");
      m.confirmation = confirmation_record::from_json(cj, cp);
      c.counterexample = std::move(m);
      if (words != confirmation_words(c))
        throw codec_error(cp + "/words", "expected \"" + confirmation_words(c) + "\" (its label's words), got " +
                                             shown(json(words)));
    } else {
      c.counterexample = std::move(m);
    }
  }
  return c;
}

std::string short_duration(std::int64_t ns) {
  if (ns < 0) return "-" + short_duration(-ns);
  struct unit {
    std::int64_t ns;
    const char* name;
  };
  static constexpr unit units[] = {{3'600'000'000'000, "h"}, {60'000'000'000, "min"}, {1'000'000'000, "s"},
                                   {1'000'000, "ms"},        {1'000, "us"}};
  for (const unit& u : units) {
    if (ns < u.ns) continue;
    // Tenths of the unit, rounded half up, by integer arithmetic.
    const std::int64_t whole = ns / u.ns;
    const std::int64_t tenths = whole >= 100 ? 0 : ((ns % u.ns) * 10 + u.ns / 2) / u.ns;
    std::int64_t w = whole, t = tenths;
    if (t == 10) {
      ++w;
      t = 0;
    }
    return std::to_string(w) + (t != 0 ? "." + std::to_string(t) : std::string()) + u.name;
  }
  return std::to_string(ns) + "ns";
}

std::string render_matrix_json(const matrix_table& t) {
  json out;
  out["format"] = "admitsim-matrix/1";
  json m;
  m["name"] = t.name;
  m["description"] = t.description;
  m["file"] = t.file;
  m["sha256"] = t.sha256;
  out["matrix"] = std::move(m);
  json sc;
  sc["name"] = t.scenario_name;
  sc["file"] = t.scenario_file ? json(*t.scenario_file) : json(nullptr);
  out["scenario"] = std::move(sc);
  json seeds;
  seeds["first"] = t.first_seed;
  seeds["count"] = t.seeds;
  out["seeds"] = std::move(seeds);
  out["complete"] = t.complete;
  json designs = json::array();
  for (const auto& d : t.designs) {
    json dj;
    dj["name"] = d.name;
    dj["changes"] = d.changes;
    designs.push_back(std::move(dj));
  }
  out["designs"] = std::move(designs);
  json faults = json::array();
  for (const auto& f : t.faults) {
    json fj;
    fj["name"] = f.name;
    fj["kind"] = f.kind;
    fj["summary"] = f.summary;
    faults.push_back(std::move(fj));
  }
  out["faults"] = std::move(faults);
  std::uint64_t n[4] = {0, 0, 0, 0};
  std::uint64_t unmet = 0;
  for (const auto& c : t.cells) {
    ++n[static_cast<int>(c.status)];
    if (!c.as_expected) ++unmet;
  }
  json totals;
  totals["cells"] = t.cells.size();
  totals["holds"] = n[0];
  totals["breaks"] = n[1];
  totals["inconclusive"] = n[2];
  totals["error"] = n[3];
  totals["not_as_expected"] = unmet;
  out["totals"] = std::move(totals);
  json cells = json::array();
  for (const auto& c : t.cells) cells.push_back(c.to_json());
  out["cells"] = std::move(cells);
  json ex;
  ex["code"] = t.exit_code;
  ex["why"] = t.why;
  out["exit"] = std::move(ex);
  return render_json(out);
}

std::string render_matrix_markdown(const matrix_table& t) {
  std::ostringstream o;
  o << "| design \\ fault |";
  for (const auto& f : t.faults) o << " " << md_esc(f.name) << " |";
  o << "\n|---|";
  for (std::size_t i = 0; i < t.faults.size(); ++i) o << "---|";
  o << "\n";
  for (std::size_t d = 0; d < t.designs.size(); ++d) {
    o << "| " << md_esc(t.designs[d].name) << " |";
    for (std::size_t f = 0; f < t.faults.size(); ++f) {
      const matrix_cell& c = t.at(d, f);
      std::string s;
      switch (c.status) {
        case cell_status::holds:
          s = "held in " + count_text(c.ev.seeds) + " (≤" + bound_percent(bound_ppm(c.ev.seeds)) + ")";
          break;
        case cell_status::breaks:
          s = "**breaks** " + count_text(c.seeds_violating) + "/" + count_text(c.seeds_run);
          if (c.worst_overshoot)
            s += ", +" + std::to_string(c.worst_overshoot->value - c.worst_overshoot->bound);
          if (c.ev.first_violating_seed) s += ", seed " + std::to_string(*c.ev.first_violating_seed);
          // "seed 0 broke (confirmed on redis-server 7.0.15)": the counterexample is that seed's.
          if (const std::string w = confirmation_words(c); !w.empty()) s += (c.ev.first_violating_seed ? " " : ", ") + w;
          break;
        case cell_status::inconclusive:
          s = "inconclusive (" + std::to_string(c.seeds_inconclusive) +
              (c.seeds_not_run != 0 ? ", " + std::to_string(c.seeds_not_run) + " not run" : std::string()) + ")";
          break;
        case cell_status::error: s = "error (" + std::to_string(c.seeds_error) + ")"; break;
      }
      if (!c.as_expected) s += " (not as expected)";
      o << " " << s << " |";
    }
    o << "\n";
  }
  o << "\n" << t.seeds << " seeds per cell from seed " << t.first_seed
    << ". **held in** N (≤B%): none of N seeds broke an invariant, so with " << evidence_confidence_percent
    << "% confidence a defect of the cell strikes at most B% of seeds (B = 1 - 0.05^(1/N)): no seed count makes it "
       "0. **breaks** K/N, +M, seed S: K of N seeds broke an invariant, the worst moment was M above the cap, and S "
       "is the first seed that broke. `admitsim matrix "
    << md_esc(t.file) << "` writes the counterexamples, the HTML table and each cell's faults injected.\n";
  return o.str();
}

std::string render_matrix_html(const matrix_table& t) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << html_esc(t.name)
    << " · matrix · admitsim</title>\n<style>" << matrix_css << "</style>\n</head>\n<body>\n<main>\n";
  o << "<h1>" << html_esc(t.name) << ": which design survives which fault</h1>\n";
  if (!t.description.empty()) o << "<p>" << html_esc(t.description) << "</p>\n";
  o << "<p class=\"muted\">Matrix <code>" << html_esc(t.file) << "</code> (sha256 " << html_esc(t.sha256.substr(0, 12))
    << "…), base scenario <code>" << html_esc(t.scenario_name) << "</code>"
    << (t.scenario_file ? " (<code>" + html_esc(*t.scenario_file) + "</code>)" : std::string(" (inline)")) << "; "
    << t.seeds << " seeds per cell from seed " << t.first_seed << ". Exit code " << t.exit_code << ".</p>\n";
  if (!t.complete) o << "<p class=\"note\"><b>Incomplete:</b> the matrix was stopped before every seed ran.</p>\n";
  for (const auto& w : t.why) o << "<p class=\"note\">Not as expected: " << html_esc(w) << "</p>\n";
  o << "<p class=\"legend\"><span><i style=\"background:#e7f4ea\"></i>held in N seeds: none broke anything, so a "
       "defect strikes at most the share shown (95% confidence)</span>"
       "<span><i style=\"background:#fbe3e4\"></i>breaks: some seed broke an invariant</span>"
       "<span><i style=\"background:#fbf1d0\"></i>inconclusive: a limit cut a run, nothing broke before it</span>"
       "<span><i style=\"background:#ece4f7\"></i>error: a run threw</span>"
       "<span><i style=\"outline:3px solid #c0262d;outline-offset:-3px\"></i>not as the matrix file expects</span></p>\n";
  o << "<table class=\"matrix\"><thead><tr><th>design \\ fault</th>";
  for (const auto& f : t.faults)
    o << "<th title=\"" << html_esc(f.summary) << "\">" << html_esc(f.name) << "</th>";
  o << "</tr></thead><tbody>\n";
  for (std::size_t d = 0; d < t.designs.size(); ++d) {
    o << "<tr><th title=\"" << html_esc(t.designs[d].changes) << "\">" << html_esc(t.designs[d].name) << "</th>";
    for (std::size_t f = 0; f < t.faults.size(); ++f) {
      const matrix_cell& c = t.at(d, f);
      o << "<td class=\"cell " << to_string(c.status) << (c.as_expected ? "" : " unmet") << "\" title=\""
        << html_esc(cell_line(c)) << "\"><span class=\"status\">" << html_esc(status_words(c)) << "</span>";
      if (c.status == cell_status::holds)
        o << "<span class=\"fig\">at most " << bound_percent(bound_ppm(c.ev.seeds)) << " of seeds (95%)</span>";
      else
        o << "<span class=\"fig\">" << c.seeds_violating << "/" << c.seeds_run << " seeds ("
          << percent(c.violation_rate_ppm()) << ")"
          << (c.ev.first_violating_seed ? ", first " + std::to_string(*c.ev.first_violating_seed) : std::string())
          << "</span>";
      o << "<span class=\"fig muted\">faults: " << html_esc(c.ev.faults_text()) << "</span>";
      if (c.worst_overshoot)
        o << "<span class=\"fig\">worst " << c.worst_overshoot->value << " against " << c.worst_overshoot->bound
          << "</span>";
      if (c.over_cap_worst_ns > 0)
        o << "<span class=\"fig\">" << short_duration(c.over_cap_worst_ns) << " over the cap (total "
          << short_duration(c.over_cap_total_ns) << ")</span>";
      if (c.seeds_inconclusive != 0) o << "<span class=\"fig\">" << c.seeds_inconclusive << " inconclusive</span>";
      if (c.seeds_error != 0) o << "<span class=\"fig\">" << c.seeds_error << " errors</span>";
      if (c.seeds_not_run != 0) o << "<span class=\"fig\">" << c.seeds_not_run << " not run</span>";
      if (c.counterexample)
        o << "<span class=\"fig\"><a href=\"" << html_esc(c.counterexample->href) << "\">counterexample</a> · <a href=\"#"
          << html_esc(c.design + "." + c.fault) << "\">why</a></span>";
      if (const std::string w = confirmation_words(c); !w.empty())
        o << "<span class=\"fig confirmation\">" << html_esc(w) << "</span>";
      if (c.expected) o << "<span class=\"fig muted\">expected: " << html_esc(*c.expected) << "</span>";
      o << "</td>";
    }
    o << "</tr>\n";
  }
  o << "</tbody></table>\n";
  o << "<p class=\"note\">Worst: the worst moment's peak against the cap over every seed. Over the cap: per seed the "
       "longest time a cap invariant spent in violation; the worst seed's, and the total over the seeds.</p>\n";
  bool any = false;
  for (const auto& c : t.cells) {
    if (c.status == cell_status::holds) continue;
    if (!any) o << "<h2>The cells that did not hold</h2>\n";
    any = true;
    o << "<section class=\"cell-detail\" id=\"" << html_esc(c.design + "." + c.fault) << "\"><h3>" << html_esc(c.design)
      << " × " << html_esc(c.fault) << ": " << html_esc(status_words(c)) << "</h3>\n<p>" << html_esc(cell_line(c)) << "</p>\n";
    if (c.first_violation) {
      const auto& v = *c.first_violation;
      o << "<p>First violation (seed " << v.seed << "): <b>" << html_esc(v.invariant) << "</b> at "
        << short_duration(v.at_ns) << ": " << html_esc(v.detail) << "</p>\n";
      if (v.cause) o << "<p>Cause: <b>" << html_esc(v.cause->first) << "</b>: " << html_esc(v.cause->second) << "</p>\n";
    }
    if (!c.broken.empty()) {
      o << "<p>Broken:";
      for (const auto& [name, n] : c.broken) o << " <code>" << html_esc(name) << "</code> (" << n << " seeds)";
      o << "</p>\n";
    }
    if (!c.causes.empty()) {
      o << "<table><thead><tr><th>cause</th><th>count</th><th>example</th></tr></thead><tbody>";
      for (const auto& k : c.causes)
        o << "<tr><td>" << html_esc(k.kind) << "</td><td>" << k.count << "</td><td>" << html_esc(k.example) << "</td></tr>";
      o << "</tbody></table>\n";
    }
    if (c.first_inconclusive)
      o << "<p>First inconclusive seed " << c.first_inconclusive->first << ": " << html_esc(c.first_inconclusive->second)
        << "</p>\n";
    if (c.first_error)
      o << "<p>First error, seed " << c.first_error->first << ": " << html_esc(c.first_error->second) << "</p>\n";
    if (c.counterexample) {
      const auto& x = *c.counterexample;
      o << "<p>Counterexample (" << (x.shrunk ? "shrunk" : "not shrunk") << ", seed " << x.seed << ", "
        << html_esc(x.invariant) << "; " << x.requests << " requests, " << x.workers << " workers, " << x.faults
        << " faults" << (x.reproduced ? "" : "; DID NOT REPRODUCE") << "): <a href=\"" << html_esc(x.href) << "\">"
        << html_esc(x.scenario) << "</a>; replay: <code>" << html_esc(x.replay) << "</code></p>\n";
      if (x.confirmation)
        o << "<p>On a real redis-server (time scale " << html_esc(x.confirmation->scale_text())
          << "): <b>" << html_esc(confirmation_words(c)) << "</b>: " << html_esc(x.confirmation->why()) << "</p>\n";
    }
    o << "</section>\n";
  }
  o << "</main>\n</body>\n</html>\n";
  return o.str();
}

std::string render_matrix_junit(const matrix_table& t) {
  std::vector<junit_suite> suites;
  for (std::size_t d = 0; d < t.designs.size(); ++d) {
    junit_suite s;
    s.name = t.name + "." + t.designs[d].name;
    for (std::size_t f = 0; f < t.faults.size(); ++f) {
      const matrix_cell& c = t.at(d, f);
      junit_case k;
      k.classname = s.name;
      k.name = c.fault;
      switch (c.status) {
        case cell_status::holds: k.result = junit_case::outcome::passed; break;
        case cell_status::breaks: k.result = junit_case::outcome::failure; break;
        case cell_status::inconclusive:
        case cell_status::error: k.result = junit_case::outcome::error; break;
      }
      std::string text;
      if (c.first_violation) {
        const auto& v = *c.first_violation;
        k.message = v.invariant + " broke at " + short_duration(v.at_ns) + " (seed " + std::to_string(v.seed) +
                    "): " + v.detail;
        text += "first violation: " + v.invariant + " at " + std::to_string(v.at_ns) + "ns, seed " +
                std::to_string(v.seed) + ": " + v.detail + "\n";
        if (v.cause) text += "cause: " + v.cause->first + ": " + v.cause->second + "\n";
      } else if (c.first_inconclusive) {
        k.message = "inconclusive: seed " + std::to_string(c.first_inconclusive->first) + ": " + c.first_inconclusive->second;
      } else if (c.first_error) {
        k.message = "error: seed " + std::to_string(c.first_error->first) + ": " + c.first_error->second;
      } else if (c.seeds_not_run != 0) {
        k.message = "inconclusive: " + std::to_string(c.seeds_not_run) + " of " +
                    std::to_string(c.seeds_run + c.seeds_not_run) + " seeds not run (the matrix was stopped)";
      }
      if (c.counterexample)
        text += "counterexample: " + c.counterexample->scenario + "\nreplay: " + c.counterexample->replay + "\n";
      const std::string confirmed = confirmation_words(c);
      if (!confirmed.empty()) {
        k.message += "; " + confirmed;
        text += "on a real redis-server (time scale " + c.counterexample->confirmation->scale_text() +
                "): " + confirmed + ": " + c.counterexample->confirmation->why() + "\n";
      }
      text += cell_line(c) + "\n";
      if (k.result != junit_case::outcome::passed) k.text = text;
      std::string out = cell_line(c);
      if (!confirmed.empty()) out += "; " + confirmed;
      if (c.expected) out += "; expected: " + *c.expected + (c.as_expected ? " (as expected)" : " (NOT as expected)");
      k.system_out = out;
      s.cases.push_back(std::move(k));
    }
    suites.push_back(std::move(s));
  }
  return render_junit(t.name, suites);
}

}  // namespace admit::reports
