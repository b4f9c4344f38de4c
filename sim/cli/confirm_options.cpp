#include "sim/cli/confirm_options.hpp"

#include <new>

#include "sim/cli/errors.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/confirm/confirm.hpp"

namespace admit::cli {

void confirm_settings::start() {
  catch_sigterm();
  opts.interrupted = interrupt_flag();
}

void confirm_options::add_to(CLI::App* sub, const std::string& what) {
  confirm_ = sub->add_flag("--confirm", on_,
                           "After the simulated work, run " + what +
                               " on a real redis-server, one at a time, and write how it went beside it "
                               "(docs/confirm.md; a measurement: only with this flag)");
  runs_given_ = sub->add_option("--confirm-runs", runs_,
                                "With --confirm: real runs at most a counterexample, 1 to " +
                                    std::to_string(confirm::runs_max) + " (default 1; a confirmed break stops them)")
                    ->type_name("N");
  scale_given_ = sub->add_option("--time-scale", scale_,
                                 "With --confirm: real time = scenario time * X, 0.01 to 100 (default 1)")
                     ->type_name("X");
  program_given_ = sub->add_option("--redis-server", program_,
                                   "With --confirm: the redis-server program (default: redis-server on PATH)")
                       ->type_name("PATH");
  wall_given_ = sub->add_option("--confirm-wall-limit", wall_,
                                "With --confirm: seconds a real run may take before it is inconclusive, 1 to 86400 "
                                "(default 600)")
                    ->type_name("S");
}

std::optional<confirm_settings> confirm_options::read() const {
  if (!on_) {
    const std::pair<CLI::Option*, const char*> given[] = {{runs_given_, "--confirm-runs"},
                                                          {scale_given_, "--time-scale"},
                                                          {program_given_, "--redis-server"},
                                                          {wall_given_, "--confirm-wall-limit"}};
    for (const auto& [opt, name] : given)
      if (opt != nullptr && opt->count() != 0)
        throw input_error{name, "expected --confirm as well: it sets how each counterexample is confirmed on a real "
                                "redis-server, and without --confirm none is"};
    return std::nullopt;
  }
  confirm_settings s;
  s.runs = static_cast<int>(parse_number("--confirm-runs", runs_, 1, confirm::runs_max));
  s.opts.time_scale = parse_time_scale("--time-scale", scale_);
  if (program_.empty()) throw input_error{"--redis-server", "expected the path or name of a program, got \"\""};
  s.opts.redis_program = program_;
  s.opts.wall_limit = std::chrono::seconds(parse_number("--confirm-wall-limit", wall_, 1, 86'400));
  return s;
}

reports::confirmation_record confirm_on_redis(const scenario::scenario& sc, const std::string& name,
                                             const std::string& broken, const confirm_settings& s) {
  confirm::run_options opts = s.opts;
  opts.seed = sc.seed;
  confirm::confirmation c;
  try {
    c = confirm::confirm_counterexample(sc, name, broken, opts, s.runs);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    // A failure of the machine, not of the counterexample: the search's outcome is still written.
    c = confirm::confirmation{};
    c.run = name;
    c.sim.verdict = "violation";
    c.sim.broken = {broken};
    c.verdict = "inconclusive";
    c.why = std::string("the real run failed: ") + e.what();
  }
  reports::confirmation_record r;
  r.verdict = c.verdict;
  r.label = confirm::label(c);
  r.time_scale = s.opts.time_scale;
  // A confirmed break is complete at its first real run; anything else that saw SIGINT or SIGTERM
  // did not make the runs it was asked for.
  r.interrupted = c.verdict != "confirmed" && opts.interrupted != nullptr && opts.interrupted->load();
  r.detail = confirm::to_json(c);
  return r;
}

}  // namespace admit::cli
