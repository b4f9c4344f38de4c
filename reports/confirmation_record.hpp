// confirmation_record: a counterexample of `admitsim explore` or `admitsim matrix` run on a real
// redis-server (--confirm, docs/confirm.md), as their outputs carry it.
//
// A confirmation is a measurement, not a function of the seed: real runs take real time on a real
// server, so it appears only when --confirm was given, and a report without it keeps its bytes.
// sim/confirm makes it (confirm::confirm_counterexample); this is what is kept of it: its verdict,
// the words every output writes (confirm::label), whether SIGINT or SIGTERM cut it, the time scale
// it ran at, and the confirmation's own JSON (the simulated break, each real run, why).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace admit::reports {

struct confirmation_record {
  std::string verdict;  // confirmed, not_confirmed, inconclusive
  std::string label;    // "confirmed on redis-server 7.0.15", "not confirmed in 3 real runs", "confirmation inconclusive"
  bool interrupted = false;  // SIGINT or SIGTERM stopped it before it could finish its runs
  double time_scale = 1.0;   // real time = scenario time * time_scale
  // confirm::to_json of the confirmation: "simulated", "verdict", "as_expected", "why", "real_runs".
  nlohmann::ordered_json detail = nlohmann::ordered_json::object();

  // What the outputs write in parentheses after "broke": the label, and ", interrupted" when it was.
  std::string words() const { return interrupted ? label + ", interrupted" : label; }
  // Its one sentence of why (the detail's "why"), or "".
  std::string why() const;
  // The time scale as a command line gives it: "0.1", "1", "2.5".
  std::string scale_text() const;

  // {"label", "interrupted" (only when true), "time_scale", then the detail's keys}. from_json reads
  // it back, checks the verdict, the label and the types, and throws codec::codec_error naming the
  // JSON path below `path`.
  nlohmann::ordered_json to_json() const;
  static confirmation_record from_json(const nlohmann::ordered_json& j, const std::string& path);
};

}  // namespace admit::reports
