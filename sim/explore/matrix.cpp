#include "sim/explore/matrix.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "gate/admit_assert.hpp"
#include "sim/world/coverage_buckets.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/explore/parallel_for.hpp"
#include "sim/explore/shrink.hpp"
#include "sim/explore/swarm.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/fault_kinds.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/json_read.hpp"
#include "sim/scenario/loader.hpp"

namespace admit::explore {

namespace {

using json = nlohmann::ordered_json;
using namespace scenario::json_read;
using scenario::fault_kind;
using scenario::scenario_error;

// What a design row changes in the base scenario.
struct design_row {
  std::string name;
  std::string path;       // "/designs/N"
  json gate_set;          // {"variant": V} or {"protocol": OBJECT}
  json gate_patch;        // merged over the gate (RFC 7396: null removes a key), or null
  json service_patch;     // merged over the service, or null
  json fleet_patch;       // merged over the fleet, or null (a worker model: {"on_acquire_timeout": ...})
  std::vector<std::pair<std::string, std::string>> holds, breaks;  // column name, its path in the file
};

// A column: a faults object (null for the baseline) and where it came from.
struct fault_column {
  std::string name;
  std::string path;        // "/faults/N", or "" for the added columns
  std::string kind;        // baseline, fault, combined
  json faults;             // a scenario faults object, or null
  std::vector<std::size_t> parts;  // combined: the file columns it combines
};

std::string join_path(const std::string& dir, const std::string& p) {
  const std::filesystem::path fp(p);
  if (fp.is_absolute() || dir.empty()) return p;
  return (std::filesystem::path(dir) / fp).string();
}

std::string short_name(const json& v, const std::string& path) {
  std::string s = read_name(v, path);
  if (s.size() > matrix_name_max)
    fail(path, "a name of 1 to " + std::to_string(matrix_name_max) + " letters, digits, '_', '-' or '.'", v);
  return s;
}

// The key of a shared rates parameter, and the kinds whose drawn faults read it.
struct shared_param {
  const char* key;
  std::function<bool(fault_kind)> reads;
  sim::vtime_ns default_ns;
};

std::vector<shared_param> shared_params() {
  const scenario::fault_rates defaults;
  return {
      {"until", [](fault_kind) { return true; }, 0},
      {"mean_duration", [](fault_kind k) { return k != fault_kind::clock_step; }, defaults.mean_duration_ns},
      {"max_step", [](fault_kind k) { return k == fault_kind::clock_step; }, defaults.max_step_ns},
      {"max_replication_lag", [](fault_kind k) { return k == fault_kind::redis_failover; },
       defaults.max_replication_lag_ns},
  };
}

// A rate of a rates object (0 when absent or not an integer: the loader has judged each part already).
std::int64_t rate_of(const json& rates, const char* key) {
  const auto it = rates.find(key);
  if (it == rates.end() || !it->is_number_integer()) return 0;
  return it->get<std::int64_t>();
}

// Faults objects combined: schedules concatenated in order, rates of one kind summed, shared
// parameters required to agree among the parts whose drawn kinds read them (see matrix.hpp).
// `parts` are (path of the faults object in the matrix file, the object); each has been validated
// on its own. One part is returned as it is.
json combine_faults(const std::vector<std::pair<std::string, const json*>>& parts, const std::string& what) {
  std::vector<std::pair<std::string, const json*>> present;
  for (const auto& p : parts)
    if (p.second != nullptr && p.second->is_object()) present.push_back(p);
  if (present.empty()) return nullptr;
  if (present.size() == 1) return *present.front().second;
  json schedule = json::array();
  std::map<std::size_t, std::int64_t> sums;  // by the rates' file order
  for (const auto& [path, f] : present) {
    if (const auto s = f->find("schedule"); s != f->end() && s->is_array())
      for (const auto& entry : *s) schedule.push_back(entry);
    const auto r = f->find("rates");
    if (r == f->end() || !r->is_object()) continue;
    for (const auto& row : scenario::fault_kind_table)
      if (scenario::drawable(row)) sums[row.rate.file_order] += rate_of(*r, row.rate.key);
  }
  json rates = json::object();
  bool any_rate = false;
  for (const auto& [order, sum] : sums) {
    if (sum == 0) continue;
    const auto& row = scenario::fault_row(scenario::fault_rates_file_order[order]);
    if (sum > scenario::fault_rate_per_hour_max)
      fail_msg(what, "cannot combine the columns' " + std::string(row.rate.key) + ": together " + std::to_string(sum) +
                         " per hour, above the most a rate may be (" +
                         std::to_string(scenario::fault_rate_per_hour_max) + ")");
    rates[row.rate.key] = sum;
    any_rate = true;
  }
  for (const shared_param& p : shared_params()) {
    std::optional<std::pair<std::string, sim::vtime_ns>> first;  // path, value
    std::optional<json> text;                                      // the first value written out
    for (const auto& [path, f] : present) {
      const auto r = f->find("rates");
      if (r == f->end() || !r->is_object()) continue;
      bool reads = false;
      for (const auto& row : scenario::fault_kind_table)
        if (scenario::drawable(row) && p.reads(row.kind) && rate_of(*r, row.rate.key) > 0) reads = true;
      if (!reads) continue;
      const auto v = r->find(p.key);
      sim::vtime_ns ns = p.default_ns;
      if (v != r->end() && v->is_string())
        ns = scenario::parse_duration_ns(v->get<std::string>()).value_or(p.default_ns);
      const std::string at = path + "/rates/" + p.key;
      if (first && first->second != ns)
        fail_msg(at, "cannot be combined with " + first->first + " into the column \"" + std::string(combined_column) +
                         "\": one rates object draws every kind, and " + p.key + " is " +
                         scenario::format_duration(first->second) + " there and " + scenario::format_duration(ns) +
                         " here (give the columns the same " + p.key + ", or write one of them as a schedule)");
      if (!first) first.emplace(at, ns);
      if (!text && v != r->end()) text = *v;
    }
    if (text && any_rate) rates[p.key] = *text;
  }
  json out = json::object();
  if (!schedule.empty()) out["schedule"] = std::move(schedule);
  if (any_rate) out["rates"] = std::move(rates);
  if (out.empty()) return nullptr;
  return out;
}

// One line of what a faults object holds: "schedule: crash at 5s, crash at 7s; rates: pause 600/h until 40s".
std::string faults_summary(const json& f) {
  if (!f.is_object()) return "the base scenario's own faults only";
  std::string o;
  if (const auto s = f.find("schedule"); s != f.end() && s->is_array() && !s->empty()) {
    o += "schedule:";
    std::size_t n = 0;
    for (const auto& e : *s) {
      if (n++ == 6) {
        o += " ... (" + std::to_string(s->size()) + " in all)";
        break;
      }
      o += (n > 1 ? ", " : " ") + e.value("kind", std::string("?")) + " at " + e.value("at", std::string("?"));
    }
  }
  if (const auto r = f.find("rates"); r != f.end() && r->is_object()) {
    std::string rs;
    for (const auto kind : scenario::fault_rates_file_order) {
      const auto& row = scenario::fault_row(kind);
      const std::int64_t v = rate_of(*r, row.rate.key);
      if (v > 0) rs += (rs.empty() ? " " : ", ") + std::string(row.name) + " " + std::to_string(v) + "/h";
    }
    for (const char* k : {"until", "mean_duration", "max_step", "max_replication_lag"})
      if (const auto v = r->find(k); v != r->end() && v->is_string()) rs += ", " + std::string(k) + " " + v->get<std::string>();
    if (!rs.empty()) o += (o.empty() ? "" : "; ") + std::string("rates:") + rs;
  }
  return o.empty() ? "no faults" : o;
}

// The base's faults combined with a column's, the cell's gate and service changed by the row.
json cell_doc(const json& base, const design_row& d, const fault_column& c,
              const std::vector<fault_column>& columns, const std::string& name, const std::string& matrix_name) {
  json doc = base;
  doc["name"] = name;
  const std::string base_description = base.value("description", std::string());
  doc["description"] = "Cell " + d.name + " x " + c.name + " of the matrix " + matrix_name + "." +
                       (base_description.empty() ? "" : " " + base_description);
  json& gate = doc["gate"];
  gate.erase("variant");
  gate.erase("protocol");
  for (auto it = d.gate_set.begin(); it != d.gate_set.end(); ++it) gate[it.key()] = it.value();
  if (!d.gate_patch.is_null()) gate.merge_patch(d.gate_patch);
  if (!d.service_patch.is_null()) {
    if (!doc.contains("service")) doc["service"] = json::object();
    doc["service"].merge_patch(d.service_patch);
  }
  if (!d.fleet_patch.is_null()) {
    if (!doc.contains("fleet")) doc["fleet"] = json::object();
    doc["fleet"].merge_patch(d.fleet_patch);
  }
  std::vector<std::pair<std::string, const json*>> parts;
  const auto bf = base.find("faults");
  parts.emplace_back("/scenario/faults", bf == base.end() ? nullptr : &*bf);
  if (c.kind == "fault") parts.emplace_back(c.path + "/faults", &c.faults);
  for (const std::size_t i : c.parts) parts.emplace_back(columns[i].path + "/faults", &columns[i].faults);
  json faults = combine_faults(parts, c.kind == "combined" ? std::string("/faults") : c.path);
  doc.erase("faults");
  if (!faults.is_null()) doc["faults"] = std::move(faults);
  doc.erase("expect");
  doc["expect"] = json{{"verdict", "pass"}};
  return doc;
}

// The typed scenario of a cell document, or a refusal naming `where` in the matrix file.
scenario::scenario load_cell(const json& doc, const std::string& where, const std::string& what) {
  try {
    return scenario::load_scenario_json(doc);
  } catch (const scenario_error& e) {
    fail_msg(where, what + " is refused: " + e.what());
  }
}

std::vector<std::pair<std::string, std::string>> read_column_names(const json& v, const std::string& path) {
  if (!v.is_array()) fail(path, "a list of fault column names (or \"*\" for every column)", v);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out.emplace_back(read_string(v[i], child(path, i), "a fault column's name, or \"*\""), child(path, i));
  return out;
}

design_row read_design(const json& v, const std::string& path, const std::string& dir,
                       const scenario::file_reader& read, std::string& changes) {
  object_reader r(v, path, "a design such as {\"name\": \"renewal\", \"variant\": \"renewal\"}");
  design_row d;
  d.path = path;
  const json& name = r.require("name", "the row's name");
  const json* variant = r.get("variant");
  const json* protocol = r.get("protocol");
  const json* gate = r.get("gate");
  const json* service = r.get("service");
  const json* fleet = r.get("fleet");
  const json* holds = r.get("holds");
  const json* breaks = r.get("breaks");
  r.finish();  // an unknown key first: it may be a misspelt "variant"
  d.name = short_name(name, child(path, "name"));
  if ((variant == nullptr) == (protocol == nullptr))
    fail_msg(path, "expected exactly one of \"variant\" (a built-in variant's name) and \"protocol\" (a protocol "
                   "file's path, relative to the matrix file, or a protocol object)");
  if (variant != nullptr) {
    d.gate_set["variant"] = read_string(*variant, child(path, "variant"), "a built-in variant's name such as \"renewal\"");
    changes = "variant " + d.gate_set["variant"].get<std::string>();
  } else if (protocol->is_string()) {
    json tmp = json{{"gate", json{{"kind", "lease"}, {"protocol", *protocol}}}};
    try {
      scenario::inline_protocol_files(tmp, dir, read);
    } catch (const scenario_error& e) {
      fail_msg(child(path, "protocol"), std::string("the protocol file is refused: ") + e.what());
    } catch (const std::exception& e) {
      fail_msg(child(path, "protocol"), e.what());
    }
    d.gate_set["protocol"] = tmp["gate"]["protocol"];
    changes = "protocol " + protocol->get<std::string>();
  } else if (protocol->is_object()) {
    d.gate_set["protocol"] = *protocol;
    changes = "protocol (inline)";
  } else {
    fail(child(path, "protocol"), "a protocol file's path (relative to the matrix file) or a protocol object", *protocol);
  }
  if (const json* g = gate) {
    if (!g->is_object()) fail(child(path, "gate"), "an object of lease gate fields to set (null removes one)", *g);
    for (const char* k : {"kind", "variant", "protocol"})
      if (g->contains(k))
        fail_msg(child(child(path, "gate"), k), std::string("expected no \"") + k + "\" here: the row's \"variant\" or "
                                                "\"protocol\" says what runs");
    d.gate_patch = *g;
    changes += " + gate " + g->dump();
    // A process's folder is relative to the matrix file, as a protocol's path is.
    json wrapped = json{{"gate", d.gate_patch}};
    scenario::absolute_process_cwds(wrapped, dir);
    d.gate_patch = std::move(wrapped["gate"]);
  }
  if (const json* s = service) {
    if (!s->is_object()) fail(child(path, "service"), "an object of service fields to set (null removes one)", *s);
    d.service_patch = *s;
    changes += " + service " + s->dump();
  }
  if (const json* f = fleet) {
    if (!f->is_object()) fail(child(path, "fleet"), "an object of fleet fields to set (null removes one)", *f);
    d.fleet_patch = *f;
    changes += " + fleet " + f->dump();
  }
  if (const json* h = holds) d.holds = read_column_names(*h, child(path, "holds"));
  if (const json* b = breaks) d.breaks = read_column_names(*b, child(path, "breaks"));
  return d;
}

}  // namespace

matrix_spec load_matrix(std::string_view text, const std::string& file, const scenario::file_reader& read) {
  if (text.empty()) fail_msg("/", "expected a JSON object, got an empty file");
  json doc = scenario::parse_json_text(text);
  const scenario::json_dismantler teardown{doc};
  const std::string dir = scenario::directory_of(file);
  object_reader r(doc, "", "a matrix object such as {\"format\": \"admitsim-matrix/1\", \"name\": ...}");
  matrix_spec spec;
  reports::matrix_table& t = spec.table;
  const json& format = r.require("format", "\"admitsim-matrix/1\"");
  if (!format.is_string() || format.get<std::string>() != matrix_format)
    fail("/format", "\"" + std::string(matrix_format) + "\"", format);
  t.name = read_name(r.require("name", "the matrix's name"), "/name");
  if (const json* x = r.get("description")) t.description = read_string(*x, "/description", "a string");
  if (const json* x = r.get("seeds"))
    spec.seeds = static_cast<std::uint64_t>(read_int(*x, "/seeds", 1, static_cast<std::int64_t>(matrix_seeds_max)));
  if (const json* x = r.get("first_seed"))
    spec.first_seed = static_cast<std::uint64_t>(read_int(*x, "/first_seed", 0, INT64_MAX));
  bool baseline = true, combined = true;
  if (const json* x = r.get("baseline")) baseline = read_bool(*x, "/baseline");
  if (const json* x = r.get("all_faults")) combined = read_bool(*x, "/all_faults");
  const json& sv = r.require("scenario", "the base lease scenario: a file's path relative to the matrix file, or inline");
  const json& dv = r.require("designs", "the rows: a list of designs");
  const json* faults_v = r.get("faults");
  r.finish();  // an unknown key before what the known ones hold

  // The base scenario: a path relative to the matrix file, or inline; protocols it names by path
  // are read relative to its own file (or to the matrix file when inline).
  json base;
  std::string base_what = "the base scenario";
  std::string base_dir = dir;
  if (sv.is_string()) {
    const std::string p = join_path(dir, sv.get<std::string>());
    t.scenario_file = sv.get<std::string>();
    base_what += " " + p;
    base_dir = scenario::directory_of(p);
    std::string bytes;
    try {
      bytes = read(p);
    } catch (const std::exception& e) {
      fail_msg("/scenario", e.what());
    }
    if (bytes.empty()) fail_msg("/scenario", base_what + ": expected a JSON object, got an empty file");
    try {
      base = scenario::parse_json_text(bytes);
    } catch (const scenario_error& e) {
      fail_msg("/scenario", base_what + " is refused: " + e.what());
    }
  } else if (sv.is_object()) {
    base = sv;
  } else {
    fail("/scenario", "a scenario file's path (relative to the matrix file) or a scenario object", sv);
  }
  const scenario::json_dismantler base_teardown{base};
  try {
    scenario::inline_protocol_files(base, base_dir, read);
  } catch (const scenario_error& e) {
    fail_msg("/scenario", base_what + " is refused: " + e.what());
  } catch (const std::exception& e) {
    fail_msg("/scenario", base_what + ": " + e.what());
  }
  const scenario::scenario base_sc = load_cell(base, "/scenario", base_what);
  if (!base.contains("gate") || base_sc.gates.size() != 1 || base_sc.gates.front().kind != scenario::gate_kind::lease)
    fail_msg("/scenario", "expected a lease scenario (one \"gate\" of kind \"lease\"): a design changes its gate");
  t.scenario_name = base_sc.name;

  // Rows.
  if (!dv.is_array() || dv.empty() || dv.size() > matrix_designs_max)
    fail("/designs", "a list of 1 to " + std::to_string(matrix_designs_max) + " designs", dv);
  std::vector<design_row> designs;
  std::set<std::string> names;
  for (std::size_t i = 0; i < dv.size(); ++i) {
    std::string changes;
    designs.push_back(read_design(dv[i], child("/designs", i), dir, read, changes));
    if (!names.insert(designs.back().name).second)
      fail(child(child("/designs", i), "name"), "a design name not used by another row", dv[i]["name"]);
    t.designs.push_back(reports::matrix_row_info{designs.back().name, changes});
  }

  // Columns: the baseline, the file's, and all of them together.
  std::vector<fault_column> columns;
  if (baseline) columns.push_back(fault_column{baseline_column, "", "baseline", nullptr, {}});
  std::vector<std::size_t> file_columns;
  if (const json* fv = faults_v) {
    if (!fv->is_array() || fv->size() > matrix_faults_max)
      fail("/faults", "a list of at most " + std::to_string(matrix_faults_max) + " fault columns", *fv);
    std::set<std::string> fnames;
    for (std::size_t i = 0; i < fv->size(); ++i) {
      const std::string p = child("/faults", i);
      object_reader fr((*fv)[i], p, "a fault column such as {\"name\": \"partition\", \"faults\": {\"schedule\": [...]}}");
      fault_column c;
      c.path = p;
      c.kind = "fault";
      const json& cname = fr.require("name", "the column's name");
      const json& cfaults = fr.require("faults", "a scenario faults object: schedule and/or rates");
      fr.finish();
      c.name = short_name(cname, child(p, "name"));
      if ((baseline && c.name == baseline_column) || (combined && c.name == combined_column))
        fail(child(p, "name"), "a name other than \"" + std::string(baseline_column) + "\" and \"" +
                                   std::string(combined_column) + "\" (the columns the matrix adds)",
             (*fv)[i]["name"]);
      if (!fnames.insert(c.name).second)
        fail(child(p, "name"), "a fault column name not used by another column", (*fv)[i]["name"]);
      c.faults = cfaults;
      if (!c.faults.is_object()) fail(child(p, "faults"), "a scenario faults object: schedule and/or rates", c.faults);
      file_columns.push_back(columns.size());
      columns.push_back(std::move(c));
    }
  }
  if (combined && file_columns.size() >= 2) columns.push_back(fault_column{combined_column, "", "combined", nullptr, file_columns});
  if (columns.empty()) fail_msg("/faults", "expected at least one column: fault columns, or \"baseline\": true");
  spec.table.first_seed = spec.first_seed;
  spec.table.seeds = spec.seeds;

  // Expectations, by column name.
  std::map<std::string, std::size_t> column_index;
  for (std::size_t i = 0; i < columns.size(); ++i) column_index[columns[i].name] = i;
  std::vector<std::vector<std::optional<std::string>>> expected(designs.size(),
                                                                std::vector<std::optional<std::string>>(columns.size()));
  std::string known;
  for (const auto& c : columns) known += (known.empty() ? "" : ", ") + c.name;
  for (std::size_t d = 0; d < designs.size(); ++d) {
    using name_list = std::vector<std::pair<std::string, std::string>>;  // column name, its path
    const std::pair<const name_list*, const char*> lists[] = {{&designs[d].holds, "holds"}, {&designs[d].breaks, "breaks"}};
    for (const auto& [list, verdict] : lists)
      for (const auto& [cname, cpath] : *list)
        if (cname != "*" && column_index.count(cname) == 0)
          fail(cpath, "a column of this matrix (" + known + ") or \"*\"", json(cname));
    // "*" (level 1) first, then names (level 2), which override it; one column at one level in
    // both lists is refused.
    std::vector<int> level_of(columns.size(), 0);
    for (int level = 1; level <= 2; ++level) {
      for (const auto& [list, verdict] : lists) {
        for (const auto& [cname, cpath] : *list) {
          if ((cname == "*") != (level == 1)) continue;
          for (std::size_t f = 0; f < columns.size(); ++f) {
            if (level == 2 && columns[f].name != cname) continue;
            if (level_of[f] == level && expected[d][f] != std::string(verdict))
              fail(cpath, "a column not named in both \"holds\" and \"breaks\"", json(cname));
            expected[d][f] = std::string(verdict);
            level_of[f] = level;
          }
        }
      }
    }
  }

  // Every cell, validated before anything runs: each design with the base's own faults, each
  // column with the first design, then the rest.
  for (std::size_t d = 0; d < designs.size(); ++d) {
    const fault_column none{baseline_column, "", "baseline", nullptr, {}};
    (void)load_cell(cell_doc(base, designs[d], none, columns, designs[d].name + ".check", t.name), designs[d].path,
                    "with the base scenario, the design's scenario");
  }
  for (const auto& c : columns) {
    if (c.kind != "fault") continue;
    json doc = base;
    doc["faults"] = c.faults;
    try {
      (void)scenario::load_scenario_json(doc);
    } catch (const scenario_error& e) {
      // The loader's path inside the faults object, as the matrix file's.
      const std::string& p = e.path;
      const std::string msg = e.what();
      if (p.rfind("/faults", 0) == 0)
        fail_msg(c.path + "/faults" + p.substr(7), msg.substr(std::min(msg.size(), p.size() + 2)));
      fail_msg(c.path, "with the base scenario, the column's faults are refused: " + msg);
    }
  }
  for (const auto& c : columns) {
    json shown = c.faults;
    if (c.kind == "combined") {
      std::vector<std::pair<std::string, const json*>> parts;
      for (const std::size_t i : c.parts) parts.emplace_back(columns[i].path + "/faults", &columns[i].faults);
      shown = combine_faults(parts, "/faults");
    }
    t.faults.push_back(reports::matrix_column_info{c.name, c.kind, c.kind == "baseline" ? "the base scenario's own faults" : faults_summary(shown)});
  }
  for (std::size_t d = 0; d < designs.size(); ++d) {
    for (std::size_t f = 0; f < columns.size(); ++f) {
      matrix_cell_spec cs;
      cs.design = d;
      cs.fault = f;
      cs.expected = expected[d][f];
      const std::string name = designs[d].name + "." + columns[f].name;
      const std::string where = columns[f].kind == "fault" ? columns[f].path : designs[d].path;
      cs.sc = load_cell(cell_doc(base, designs[d], columns[f], columns, name, t.name), where,
                        "the cell " + designs[d].name + " x " + columns[f].name + " (the base scenario, " +
                            designs[d].path + " and " + (columns[f].path.empty() ? columns[f].name : columns[f].path) + ")");
      spec.cells.push_back(std::move(cs));
    }
  }
  return spec;
}

}  // namespace admit::explore

namespace admit::explore {

namespace {

// What the seeds of one cell found, folded in whatever order they finish: every first and worst
// keeps the smallest seed, so the result depends on the seeds alone.
struct cell_fold {
  reports::matrix_cell cell;
  std::map<std::string, std::uint64_t> broken;
  struct cause_acc {
    std::uint64_t count = 0;
    std::uint64_t seed = UINT64_MAX;
    std::string example;
  };
  std::map<std::string, cause_acc> causes;
  std::optional<std::uint64_t> first_seed;  // the first violating seed
  std::string first_variant;
  invariant_break first_break;

  void add(const seed_outcome& o) {
    auto& c = cell;
    ++c.seeds_run;
    if (!o.error) {
      const bool cut =
          std::any_of(o.runs.begin(), o.runs.end(), [](const run_outcome& r) { return r.inconclusive.has_value(); });
      std::vector<const check::probe_counts*> runs;
      for (const run_outcome& r : o.runs) runs.push_back(&r.coverage);
      c.ev.add_seed(o.seed, o.any_violation(), cut, runs);
      for (const run_outcome& r : o.runs) c.ev.add_faults(r.faults_injected);
    }
    if (o.error) {
      ++c.seeds_error;
      if (!c.first_error || o.seed < c.first_error->first) c.first_error.emplace(o.seed, *o.error);
    }
    if (o.any_inconclusive()) {
      ++c.seeds_inconclusive;
      std::string reason;
      for (const auto& r : o.runs)
        if (r.inconclusive && reason.empty()) reason = *r.inconclusive;
      if (!c.first_inconclusive || o.seed < c.first_inconclusive->first) c.first_inconclusive.emplace(o.seed, reason);
    }
    if (!o.any_violation()) return;
    ++c.seeds_violating;
    std::set<std::string> names;
    std::int64_t over_cap_ns = 0;
    for (const auto& r : o.runs) {
      for (const auto& b : r.broken) {
        names.insert(b.name);
        for (const auto& k : b.causes) {
          cause_acc& a = causes[k.kind];
          a.count += k.count;
          if (o.seed < a.seed) {
            a.seed = o.seed;
            a.example = k.example;
          }
        }
        if (!b.level) continue;
        over_cap_ns = std::max(over_cap_ns, b.time_in_violation_ns);
        const std::int64_t over = b.worst_value - b.worst_bound;
        auto& w = c.worst_overshoot;
        if (!w || over > w->value - w->bound || (over == w->value - w->bound && o.seed < w->seed))
          w = reports::matrix_overshoot{b.name, b.worst_value, b.worst_bound, o.seed};
      }
      if (!r.broken.empty() && (!first_seed || o.seed < *first_seed)) {
        first_seed = o.seed;
        first_variant = r.variant;
        first_break = r.broken.front();
      }
    }
    for (const auto& n : names) ++broken[n];
    c.over_cap_total_ns += over_cap_ns;
    if (over_cap_ns > c.over_cap_worst_ns || (over_cap_ns == c.over_cap_worst_ns && over_cap_ns > 0 &&
                                              o.seed < c.over_cap_worst_seed.value_or(UINT64_MAX))) {
      c.over_cap_worst_ns = over_cap_ns;
      c.over_cap_worst_seed = o.seed;
    }
  }

  // The cell's figures, once every seed that will run has run (`budget` of them were asked for: a
  // stop leaves fewer, and a cell that nothing broke is then not known to hold).
  void finish(std::uint64_t budget) {
    auto& c = cell;
    c.seeds_not_run = budget - c.seeds_run;
    const bool cut = c.seeds_not_run != 0;
    c.status = c.seeds_violating != 0  ? reports::cell_status::breaks
               : c.seeds_error != 0    ? reports::cell_status::error
               : c.seeds_inconclusive != 0 || cut ? reports::cell_status::inconclusive
                                                  : reports::cell_status::holds;
    for (const auto& [name, n] : broken) c.broken.emplace_back(name, n);
    for (const auto& [kind, a] : causes) c.causes.push_back(reports::matrix_cause{kind, a.count, a.example});
    std::stable_sort(c.causes.begin(), c.causes.end(),
                     [](const reports::matrix_cause& a, const reports::matrix_cause& b) { return a.count > b.count; });
    if (c.causes.size() > top_causes) c.causes.resize(top_causes);
    ADMIT_ASSERT(c.ev.violating == c.seeds_violating && c.ev.seeds <= c.seeds_run &&
                     c.ev.first_violating_seed == first_seed,
                 "the cell's evidence counts the seeds its figures count");
    if (first_seed) {
      reports::matrix_violation v;
      v.seed = *first_seed;
      v.invariant = first_break.name;
      v.at_ns = first_break.at_ns;
      v.detail = first_break.detail;
      if (!first_break.causes.empty()) v.cause.emplace(first_break.causes.front().kind, first_break.causes.front().example);
      c.first_violation = std::move(v);
    }
  }

  static constexpr std::size_t top_causes = 3;
};

}  // namespace

std::vector<matrix_cell_outcome> run_matrix(const matrix_spec& spec, const matrix_options& options) {
  const std::uint64_t seeds = options.seeds.value_or(spec.seeds);
  ADMIT_ASSERT(seeds >= 1, "a seed budget of at least one seed");
  const std::size_t cells = spec.cells.size();
  std::vector<cell_fold> folds(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    const auto& cs = spec.cells[i];
    folds[i].cell.design = spec.table.designs[cs.design].name;
    folds[i].cell.fault = spec.table.faults[cs.fault].name;
    folds[i].cell.expected = cs.expected;
  }
  explore_mode mode;
  mode.run_to_end = true;
  std::mutex m;
  // Phase 1: every (cell, seed), seeds of a cell next to each other.
  parallel_for(cells * seeds, options.jobs, [&](std::size_t task) {
    const std::size_t cell = task / seeds;
    const std::uint64_t seed = spec.first_seed + task % seeds;
    if (options.stop && options.stop()) return;  // not run: the cell counts fewer seeds
    const seed_outcome o = explore_one(spec.cells[cell].sc, seed, mode);
    std::lock_guard<std::mutex> lock(m);
    folds[cell].add(o);
  }, options.stop);
  std::vector<matrix_cell_outcome> out(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    folds[i].finish(seeds);
    out[i].cell = std::move(folds[i].cell);
    world::drop_buckets_never_struck(out[i].cell.ev.coverage, spec.cells[i].sc);
  }
  // Phase 2: the counterexample of each cell that broke.
  std::vector<std::size_t> broke;
  for (std::size_t i = 0; i < cells; ++i)
    if (folds[i].first_seed) broke.push_back(i);
  parallel_for(broke.size(), options.jobs, [&](std::size_t k) {
    const std::size_t i = broke[k];
    const cell_fold& f = folds[i];
    const scenario::scenario& sc = spec.cells[i].sc;
    const std::uint64_t seed = *f.first_seed;
    const shrink_target target{f.first_variant, f.first_break.name};
    explored_scenario x = explore_seed(sc, seed);
    reports::matrix_counterexample ce;
    ce.seed = seed;
    ce.invariant = target.invariant;
    scenario::scenario file;
    if (options.shrink && !(options.stop && options.stop())) {  // once stopped, the seed's scenario unshrunk
      shrink_limits limits;
      limits.max_runs = options.shrink_runs;
      shrink_result r = shrink(x.sc, seed, target, limits);
      if (r.started && r.reproduced) {
        file = std::move(r.minimal);
        ce.shrunk = true;
        ce.reproduced = true;
        file.description = "Cell " + out[i].cell.design + " x " + out[i].cell.fault + " of the matrix " +
                           spec.table.name + ", seed " + std::to_string(seed) + ". " + file.description;
      }
    }
    if (!ce.shrunk) {
      // The seed's own explored run, focused on the invariant, as the search ran it.
      file = std::move(x.sc);
      file.expect = scenario::expect_spec{};
      file.expect.verdict = "violation";
      file.expect.violated = {target.invariant};
      file.description = "Cell " + out[i].cell.design + " x " + out[i].cell.fault + " of the matrix " +
                         spec.table.name + ", explored with seed " + std::to_string(seed) + " (" +
                         swarm_summary(x.swarm) + "; " + std::to_string(x.faults_drawn) + " faults drawn), not shrunk.";
    }
    file.name = sc.name;
    ce.requests = request_count(file);
    ce.workers = file.fleet.workers;
    ce.faults = file.faults.schedule.size();
    std::lock_guard<std::mutex> lock(m);
    out[i].cell.counterexample = std::move(ce);
    out[i].counterexample = std::move(file);
  });
  return out;
}

void judge_matrix(reports::matrix_table& t) {
  t.why.clear();
  std::uint64_t unmet = 0;
  std::string first;
  for (auto& c : t.cells) {
    const bool judged = c.status == reports::cell_status::holds || c.status == reports::cell_status::breaks;
    c.as_expected = judged && (!c.expected || *c.expected == reports::to_string(c.status));
    if (c.as_expected) continue;
    ++unmet;
    if (first.empty())
      first = c.design + " x " + c.fault + " " + reports::to_string(c.status) +
              (c.expected ? ", expected to " + std::string(*c.expected == "holds" ? "hold" : "break") : std::string());
  }
  if (unmet != 0)
    t.why.push_back(std::to_string(unmet) + " cells not as the matrix file expects (the first: " + first + ")");
  for (const auto& c : t.cells)
    if (c.counterexample && !c.counterexample->reproduced)
      t.why.push_back("the counterexample of " + c.design + " x " + c.fault + " did not reproduce its violation");
  t.exit_code = t.why.empty() ? 0 : 1;
}

}  // namespace admit::explore
