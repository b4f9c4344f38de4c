// admitsim sweep FILE --param PATH (--from A --to B [--steps N] | --values V1,V2,...)
//                [--seeds N] [--bisect [--tolerance T]] [--jobs N] [--out PATH|-] [--html PATH] [--quiet]
//
// Varies one field of the scenario (a JSON Pointer into its document, protocol
// files inline) over a grid of values, runs each value over a seed budget with
// the explorer, and reports the violation rate per value and, for a monotone
// parameter, the boundary between safe and unsafe, bisected with --bisect
// (sim/explore/sweep.hpp, docs/sweep.md). Every option and every grid value is
// checked, and every output path, before anything runs. Exit codes: 0 every
// value was judged (safe or unsafe); 1 some value had seeds that were
// inconclusive or ended in an error; 2 bad input or usage.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "reports/sweep_html.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/explore.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/cli/verb.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/json_path_error.hpp"

namespace admit::cli {

namespace {

using json = nlohmann::ordered_json;

constexpr std::uint64_t default_seeds = 20;
constexpr std::uint64_t default_steps = 11;
constexpr std::uint64_t seeds_max = 1'000'000;

const char* kind_words(explore::param_kind k) {
  switch (k) {
    case explore::param_kind::duration: return "a duration such as \"2.5s\" or \"-1s\"";
    case explore::param_kind::integer: return "an integer such as 4";
    case explore::param_kind::number: return "a number such as 0.8";
  }
  return "a value";
}

explore::param_value read_value(const std::string& option, const explore::param_target& t, const std::string& text) {
  const auto v = explore::parse_value(t, text);
  if (!v)
    throw input_error{option, std::string("expected ") + kind_words(t.kind) + " (the field " + t.pointer + " holds " +
                                  (t.kind == explore::param_kind::duration ? "durations" : t.kind == explore::param_kind::integer
                                                                                             ? "integers"
                                                                                             : "numbers") +
                                  "), got \"" + text + "\""};
  return *v;
}

bool less(const explore::param_target& t, const explore::param_value& a, const explore::param_value& b) {
  return t.kind == explore::param_kind::number ? a.x < b.x : a.n < b.n;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

class sweep_verb final : public verb {
 public:
  explicit sweep_verb(CLI::App& app)
      : verb(app.add_subcommand("sweep",
                                "Vary one scenario field over a grid of values, run each over a seed budget, report "
                                "the violation rate per value and where the safe edge lies (docs/sweep.md)")) {
    sub_->add_option("FILE", file_, "Scenario file ('-' for standard input)")->required();
    sub_->add_option("--param", param_,
                     "JSON Pointer to the field to vary, such as /fleet/clocks/0/offset or /gate/lease (protocol files "
                     "count as inline: /gate/protocol/0/client/...)")
        ->required()
        ->type_name("PATH");
    auto* from = sub_->add_option("--from", from_, "The grid's first value, typed like the field (\"2s\", 4, 0.5)")->type_name("A");
    auto* to = sub_->add_option("--to", to_, "The grid's last value, above --from")->type_name("B");
    auto* steps = sub_->add_option("--steps", steps_, "Values from --from to --to, evenly spaced: 2 to 1000 (default 11)")
                      ->type_name("N");
    auto* values = sub_->add_option("--values", values_, "The grid as a list in increasing order: V1,V2,... (1 to 1000 values)")
                       ->type_name("V1,V2,...");
    from->needs(to);
    to->needs(from);
    steps->needs(from);
    for (CLI::Option* o : {from, to, steps}) values->excludes(o);
    seeds_given_ = sub_->add_option("--seeds", seeds_, "Seeds per value, from 0: 1 to 1000000 (default 20)")->type_name("N");
    auto* bisect = sub_->add_flag("--bisect", bisect_,
                                  "For a monotone parameter, bisect between the last safe and the first unsafe value");
    sub_->add_option("--tolerance", tolerance_,
                     "With --bisect: stop when the boundary is bracketed this closely, in the field's unit (default a "
                     "sixteenth of the grid's smallest step)")
        ->type_name("T")
        ->needs(bisect);
    jobs_given_ = sub_->add_option("--jobs,-j", jobs_,
                                   "Threads for the seeds of each value: 1 to " + std::to_string(jobs_max) +
                                       " (default: the machine's hardware threads)")
                      ->type_name("N");
    sub_->add_option("--out", out_, "The sweep's JSON ('-' for stdout; default out/<name>-sweep.json)")->type_name("PATH");
    sub_->add_option("--html", html_, "Also write an HTML page with the plot of the violation rate")->type_name("PATH");
    sub_->add_flag("--quiet,-q", quiet_, "No line per value on stderr (the boundary line still prints)");
  }

  int run() const override;

 private:
  std::string file_, param_, from_, to_, steps_, values_, seeds_, tolerance_, jobs_;
  CLI::Option* seeds_given_ = nullptr;
  CLI::Option* jobs_given_ = nullptr;
  std::string out_, html_;
  bool bisect_ = false;
  bool quiet_ = false;
};

int sweep_verb::run() const {
  const std::string bytes = read_input(file_, "scenario file");
  json doc;
  const scenario::scenario base = parse_scenario(file_, bytes, doc);

  explore::sweep_request req;
  const explore::target_or_error found = explore::find_target(doc, param_);
  if (!found.target) throw input_error{"--param", found.why};
  req.target = *found.target;
  const explore::param_target& t = req.target;

  // The grid.
  if (!values_.empty()) {
    const std::vector<std::string> texts = split_commas(values_);
    if (texts.size() > explore::sweep_values_max)
      throw input_error{"--values", "expected at most " + std::to_string(explore::sweep_values_max) + " values, got " +
                                        std::to_string(texts.size())};
    for (const auto& s : texts) {
      req.grid.push_back(read_value("--values", t, s));
      if (req.grid.size() > 1 && !less(t, req.grid[req.grid.size() - 2], req.grid.back()))
        throw input_error{"--values", "expected values in increasing order, each once, got \"" + s + "\" after \"" +
                                          explore::value_exact(t, req.grid[req.grid.size() - 2]) + "\""};
    }
  } else if (!from_.empty() || !to_.empty()) {
    const explore::param_value a = read_value("--from", t, from_);
    const explore::param_value b = read_value("--to", t, to_);
    if (!less(t, a, b))
      throw input_error{"--to", "expected a value above --from (" + explore::value_exact(t, a) + "), got \"" + to_ + "\""};
    const std::uint64_t steps =
        steps_.empty() ? default_steps : parse_number("--steps", steps_, 2, explore::sweep_values_max);
    req.grid = explore::even_grid(t, a, b, steps);
  } else {
    throw input_error{"sweep", "expected a grid: --from A --to B [--steps N], or --values V1,V2,... (admitsim sweep "
                               "--help shows the usage)"};
  }
  req.seeds = seeds_given_->count() != 0 ? parse_number("--seeds", seeds_, 1, seeds_max) : default_seeds;
  req.bisect = bisect_;
  req.tolerance = explore::default_tolerance(t, req.grid);
  if (!tolerance_.empty()) {
    req.tolerance = read_value("--tolerance", t, tolerance_);
    const bool positive = t.kind == explore::param_kind::number ? req.tolerance.x > 0 : req.tolerance.n > 0;
    if (!positive) throw input_error{"--tolerance", "expected a value above 0, got \"" + tolerance_ + "\""};
  }
  req.jobs = jobs_given_->count() != 0 ? static_cast<unsigned>(parse_number("--jobs", jobs_, 1, jobs_max))
                                       : std::clamp(std::thread::hardware_concurrency(), 1u, jobs_max);

  // Every value of the grid as the loader judges it, before anything runs.
  for (const auto& v : req.grid) {
    try {
      (void)explore::load_patched(doc, t, v);
    } catch (const scenario::scenario_error& e) {
      throw input_error{file_, std::string(e.what()) + " (the value " + explore::value_text(t, v, explore::text_resolution_ns(req)) + " of --param " +
                                   t.pointer + ")"};
    }
  }

  // The outputs, checked before anything runs.
  std::string out = out_;
  if (out.empty()) {
    if (const auto why = prepare_output_dir("out")) throw input_error{"out", *why};
    out = "out/" + base.name + "-sweep.json";
  }
  if (const auto why = check_output(out)) throw input_error{out, *why};
  if (!html_.empty()) {
    if (const auto why = check_output(html_)) throw input_error{html_, *why};
    if (same_output(out, html_)) throw input_error{"--html and --out", "expected two files, got the same one: " + html_};
  }

  req.doc = doc;
  // The gate's lease and renewal in the words, unless the swept field may be one of them.
  if (t.pointer.rfind("/gate", 0) != 0) req.context = explore::lease_context(base);
  if (!quiet_)
    req.on_value = [&](const explore::value_result& r, bool bisecting) {
      // A safe value says what it rests on: the most share of seeds a defect could strike unseen (95%).
      const std::string cls = r.cls() == explore::value_class::safe
                                  ? "safe, at most " + reports::bound_percent(reports::bound_ppm(r.ev.seeds)) + " of seeds"
                                  : explore::to_string(r.cls());
      std::fprintf(stderr, "sweep %s%s = %s: %llu of %llu seeds violating (%s)\n", bisecting ? "bisect " : "",
                   t.pointer.c_str(), explore::value_text(t, r.value, explore::text_resolution_ns(req)).c_str(),
                   static_cast<unsigned long long>(r.violating), static_cast<unsigned long long>(r.seeds_run),
                   cls.c_str());
    };
  // SIGINT stops the sweep between seeds; what ran is written, marked incomplete.
  req.stop = [] { return sigint_seen(); };
  catch_sigint();
  explore::sweep_result res;
  try {
    res = explore::run_sweep(req);
  } catch (const scenario::scenario_error& e) {
    throw input_error{file_, std::string(e.what()) + " (a bisection value of --param " + t.pointer + ")"};
  } catch (const std::system_error& e) {
    throw input_error{"--jobs", "cannot start " + std::to_string(req.jobs) + " threads (" + e.code().message() +
                                    "); try a smaller number"};
  }

  // The command that makes the same sweep (--jobs and the outputs change no byte of it).
  std::string command = "admitsim sweep " + reports::shell_quote(file_) + " --param " + reports::shell_quote(t.pointer);
  if (!values_.empty())
    command += " --values " + reports::shell_quote(values_);
  else
    command += " --from " + reports::shell_quote(from_) + " --to " + reports::shell_quote(to_) + " --steps " +
               std::to_string(steps_.empty() ? default_steps : parse_number("--steps", steps_));
  command += " --seeds " + std::to_string(req.seeds);
  if (req.bisect) command += " --bisect --tolerance " + reports::shell_quote(explore::value_exact(
                                                            [&] { auto u = t; u.signed_text = false; return u; }(), req.tolerance));

  if (res.stopped) print_error("sweep", "interrupted (SIGINT): the report covers the values that ran, marked incomplete");
  bool judged = true;
  for (const auto* list : {&res.grid, &res.bisect})
    for (const auto& v : *list) judged = judged && v.cls() != explore::value_class::unknown;
  const int rc = judged && !res.stopped ? exit_as_expected : exit_not_expected;

  json j;
  j["format"] = "admitsim-sweep/1";
  json scj;
  scj["name"] = base.name;
  scj["file"] = file_;
  scj["sha256"] = reports::sha256_hex(bytes);
  scj["description"] = base.description;
  j["scenario"] = std::move(scj);
  j["command"] = command;
  const json body = explore::sweep_json(req, res);
  for (auto it = body.begin(); it != body.end(); ++it) j[it.key()] = *it;
  j["exit"] = rc;
  const std::string json_bytes = j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  if (const auto why = write_output(out, json_bytes, "sweep")) throw input_error{out, *why};
  if (!html_.empty())
    if (const auto why = write_output(html_, reports::render_sweep_html(j), "sweep page")) throw input_error{html_, *why};
  std::fprintf(stderr, "sweep %s: %s -> %s\n", file_.c_str(), j["boundary"]["words"].get<std::string>().c_str(),
               out.c_str());
  return rc;
}

}  // namespace

std::unique_ptr<verb> make_sweep_verb(CLI::App& app) { return std::make_unique<sweep_verb>(app); }

}  // namespace admit::cli
