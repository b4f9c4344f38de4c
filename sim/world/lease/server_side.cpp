#include "sim/world/lease/server_side.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "gate/admit_assert.hpp"
#include "gate/redis/ascii_case.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/cause_text.hpp"

namespace admit::world::lease {

namespace {

// A sorted-set score as whole milliseconds. A protocol may store any double there (inf, 1e300, as ZADD
// takes them), and converting one outside int64's range is undefined, so it saturates; NaN, which no
// sorted set holds, reads as 0.
std::int64_t score_as_ms(double score) {
  if (std::isnan(score)) return 0;
  if (score >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (score <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(score);
}
// A reply as a sentence shows it: redis-cli's rendering, a status reply named
// as one ("status OK"), cut after 80 characters (a long array names its start).
std::string shown(const redis::reply& r) {
  std::string s = r.type == redis::reply::kind::status ? "(status) " + r.text : redis::to_string(r);
  constexpr std::size_t shown_max = 80;
  if (s.size() > shown_max) s = s.substr(0, shown_max) + "...";
  return s;
}
}  // namespace

void server_side::permit_left(std::string_view member, const permit_loss& how, bool live) {
  permit_loss on = how;
  if (node_members_ != nullptr) [[unlikely]] {
    // A quorum permit is lost only when this node's loss leaves too few nodes holding it (fleet::lost_on).
    if (!fleet_.lost_on(member, node_index_)) return;
    on.node = static_cast<std::int64_t>(node_index_);
  }
  const std::optional<fleet::loss_of> lost = fleet_.lost_permit(member);
  if (!lost) return;  // a member no worker of the fleet named (a protocol's own)
  const worker_state& w = fleet_[lost->worker];
  facts_.publish(fact::permit_lost{lost->worker, lost->number, on, lost->current, w.paused_from_ns, w.paused_until});
  if (lost->holder == nullptr || !live) return;
  facts_.publish(fact::permit_taken{member, lost->worker, on.by == permit_loss::how::expired_with_key});
}

void server_side::granted(std::size_t wi, std::string_view token) {
  if (!fleet_.granted(wi, token)) return;
  facts_.publish(fact::permit_granted{wi, token, node_.server_offset_ns(), fleet_[wi].clock.step_ns});
}

void server_side::renewed(std::size_t wi, std::string_view token) {
  if (fleet_.renewed(wi, token)) facts_.publish(fact::permit_renewed{wi, token});
}

permit_loss server_side::reaped_by(std::size_t wi, bool reaper_clock) const {
  ADMIT_ASSERT(wi < fleet_.size(), "a script of a worker of the fleet reaps");
  const vtime_ns now = sched_.now_ns();
  permit_loss loss;
  loss.by = permit_loss::how::reaped;
  loss.at_ns = now;
  loss.reaper = wi;
  loss.reaper_clock = reaper_clock;
  loss.reaper_offset_ns = fleet_[wi].clock.offset_ns(now);
  loss.server_offset_ns = node_.server_offset_ns();
  return loss;
}

void server_side::expired(const redis::sorted_set& gone) {
  // A key past its deadline goes, with every permit in it, at the first
  // command that touches it: a holder still working has lost its permit.
  permit_loss loss;
  loss.by = permit_loss::how::expired_with_key;
  loss.at_ns = sched_.now_ns();
  loss.server_offset_ns = node_.server_offset_ns();
  for (const redis::sorted_set::entry& e : gone.entries()) permit_left(e.member, loss, true);
}

void server_side::use_protocol(const redis::protocol& proto, std::string holders_key, std::int64_t lease_ms,
                               std::optional<std::string> free_key) {
  ADMIT_ASSERT(free_key.has_value() == proto.holders.free.has_value(), "a counter key exactly when holders name one");
  proto_ = &proto;
  node_.deploy(proto);
  node_.set_holders_shape(proto.holders.shape);
  if (proto.grants_permit_ids()) node_.name_permits();
  holders_key_ = std::move(holders_key);
  free_key_ = std::move(free_key);
  lease_ms_ = lease_ms;
  for (const redis::script_op op : {redis::script_op::acquire, redis::script_op::release, redis::script_op::renew}) {
    if (op == redis::script_op::renew && !proto.renew) continue;
    const redis::protocol_call& c = proto.call(op);
    // A script call's argv: EVALSHA, the SHA, numkeys, the keys, then the args.
    const std::vector<redis::arg_template>& args = c.is_command() ? c.command : c.args;
    const std::ptrdiff_t first = c.is_command() ? 0 : static_cast<std::ptrdiff_t>(3 + c.keys.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i].pieces.size() != 1 || !args[i].pieces[0].value) continue;
      const redis::placeholder ph = *args[i].pieces[0].value;
      if (ph != redis::placeholder::now_ms && ph != redis::placeholder::expiry_ms) continue;
      now_args_[static_cast<std::size_t>(op)] = now_arg{first + static_cast<std::ptrdiff_t>(i), ph == redis::placeholder::expiry_ms};
      break;
    }
  }
}

bool server_side::run_setup(bool again) {
  ADMIT_ASSERT(proto_ != nullptr, "only a protocol has set-up calls");
  if (failure_ || inconsistency_ || setup_failure_) return false;
  const vtime_ns now = sched_.now_ns();
  const std::int64_t now_us = node_.server_now_us(now);
  ADMIT_ASSERT(!node_.down(now), "set-up runs on a node that is up");
  notice_expiry(now_us);
  std::vector<std::string> before;
  if (again) {
    if (const redis::sorted_set* set = node_.set_view(holders_key_, now_us))
      for (const redis::sorted_set::entry& e : set->entries()) before.push_back(e.member);
  }
  redis::call_values v;
  v.key = gate_key_;
  v.limit = gate_limit_;
  v.lease_ms = lease_ms_;
  v.now_ms = now_us / 1000;
  v.queue_timeout_ms = gate_queue_timeout_ms_;
  const std::vector<redis::protocol_call>& calls = proto_->setup.calls;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const redis::protocol_call& c = calls[i];
    std::vector<std::string> argv;
    if (c.is_command()) {
      for (const redis::arg_template& t : c.command) argv.push_back(redis::expand(t, v));
    } else {
      argv = {"EVAL", proto_->scripts[c.script].source, std::to_string(c.keys.size())};
      for (const redis::arg_template& t : c.keys) argv.push_back(redis::expand(t, v));
      for (const redis::arg_template& t : c.args) argv.push_back(redis::expand(t, v));
    }
    const redis::reply answer = node_.run_command(now, now_us, argv);
    const redis::script_reply read = redis::read_reply(answer, c.rule);
    if (read.granted()) continue;
    std::string what = "the protocol's set-up call " + std::to_string(i + 1) + " (" +
                       (c.is_command() ? argv.front() : "script \"" + proto_->scripts[c.script].name + "\"") + ")";
    if (again) what += ", run again as the node came back,";
    if (answer.is_error()) {
      const redis::script_error_info& e = node_.last_script_error();
      setup_failure_ = what + " failed at " + span_text(now) + ": " +
                       (c.is_command() || e.message.empty() ? answer.text : e.message);
    } else {
      setup_failure_ = what + " replied " + shown(answer) + " at " + span_text(now) + ", which its rule " +
                       redis::describe(c.rule) + " reads as not done";
    }
    sched_.stop();
    return false;
  }
  if (again && !before.empty()) {
    // A set-up that wipes the holders takes the permits of holders still working.
    const redis::sorted_set* after = node_.set_view(holders_key_, now_us);
    permit_loss loss;
    loss.by = permit_loss::how::setup;
    loss.at_ns = now;
    loss.server_offset_ns = node_.server_offset_ns();
    for (const std::string& m : before)
      if (after == nullptr || !after->score(m).has_value()) permit_left(m, loss, true);
  }
  return true;
}

std::optional<std::int64_t> server_side::caller_now_ms(const gate::command_request& req) const {
  ADMIT_ASSERT(process_client_, "only a process client's arguments are searched for its clock");
  constexpr std::int64_t slack_ms = 1;
  const auto near = [](std::int64_t a, std::int64_t b) { return a - b <= slack_ms && b - a <= slack_ms; };
  // A now is among a call's first arguments; a child's command may have a million.
  constexpr std::size_t args_searched = 32;
  const std::size_t args = std::min(req.argv.size(), args_searched + 1);
  for (auto wall = req.caller_walls_ms.rbegin(); wall != req.caller_walls_ms.rend(); ++wall) {
    const std::int64_t wall_ms = *wall;
    for (std::size_t i = 1; i < args; ++i) {
      const std::string& text = req.argv[i];
      if (text.empty() || text.size() > 24) continue;
      const char* const first = text.data();
      const char* const last = text.data() + text.size();
      std::int64_t ms = 0;
      if (const auto [end, ec] = std::from_chars(first, last, ms); ec == std::errc{} && end == last) {
        if (near(ms, wall_ms)) return ms;
        if (ms <= std::numeric_limits<std::int64_t>::max() - lease_ms_ && near(ms - lease_ms_, wall_ms))
          return ms - lease_ms_;  // an expiry: now + lease
        if (ms >= std::numeric_limits<std::int64_t>::min() + lease_ms_ && near(ms + lease_ms_, wall_ms))
          return ms + lease_ms_;  // a cut-off: now - lease
        continue;
      }
      double seconds = 0;
      if (const auto [end, ec] = std::from_chars(first, last, seconds); ec == std::errc{} && end == last &&
          std::isfinite(seconds) && std::abs(seconds) < 1e15) {
        const auto as_ms = static_cast<std::int64_t>(std::llround(seconds * 1000.0));
        if (near(as_ms, wall_ms)) return as_ms;
      }
    }
  }
  return std::nullopt;
}

std::int64_t server_side::command_now_ms(const gate::command_request& req, std::int64_t now_us) const {
  if (process_client_) [[unlikely]]
    return caller_now_ms(req).value_or(now_us / 1000);
  const now_arg& a = now_args_[static_cast<std::size_t>(req.op)];
  if (a.index < 0 || static_cast<std::size_t>(a.index) >= req.argv.size()) return now_us / 1000;
  const std::string& text = req.argv[static_cast<std::size_t>(a.index)];
  std::int64_t ms = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc{}) return now_us / 1000;
  return a.expiry ? ms - lease_ms_ : ms;
}

void server_side::notice_losses(std::size_t wi, const gate::command_request& req, std::span<const std::string> before,
                                const redis::sorted_set* after, std::int64_t now_us) {
  // The holders mostly keep their order (an acquire reaps the oldest and adds
  // the newest; a release takes one out), so a member is first looked for at
  // the next place of `after` in order, and only then by name.
  ADMIT_ASSERT(before.size() == holders_before_count_ && holders_before_scores_.size() >= before.size(),
               "the holders before the command, each with its score");
  using entry = redis::sorted_set::entry;
  const std::span<const entry> kept = after ? after->entries() : std::span<const entry>{};
  std::size_t next = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const std::string& member = before[i];
    if (next < kept.size() && kept[next].member == member) {
      ++next;
      continue;
    }
    if (after && after->score(member).has_value()) continue;
    if (req.op == redis::script_op::release && member == req.token) continue;  // its own release
    permit_loss loss = reaped_by(wi, callers_now(req));
    loss.scored = true;
    loss.score_ms = score_as_ms(holders_before_scores_[i]);
    loss.now_ms = command_now_ms(req, now_us);
    permit_left(member, loss, true);
  }
}

void server_side::script_failed(std::size_t wi, const gate::command_request& req) {
  if (failure_) return;
  const redis::script_error_info& e = node_.last_script_error();
  const redis::protocol_call& c = proto_->call(req.op);
  script_failure f;
  f.operation = redis::script_op_name(req.op);
  if (!c.is_command()) {
    f.script = proto_->scripts[c.script].name;
    f.origin = proto_->scripts[c.script].origin;
  }
  f.message = e.message;
  f.line = e.line;
  f.command = e.command;
  f.step_limit = e.step_limit;
  f.memory_limit = e.memory_limit;
  f.token = req.token;
  f.worker = wi;
  f.at_ns = sched_.now_ns();
  failure_ = std::move(f);
  ADMIT_ASSERT(failure_ && !failure_->operation.empty() && failure_->worker == wi, "the first failure is kept, with its worker");
  facts_.publish(fact::script_failed{wi, failure_->operation});
  sched_.stop();
}

void server_side::protocol_inconsistent(std::size_t wi, const gate::command_request& req, const redis::reply& answer,
                                        const redis::reply_read& rule, std::string why) {
  ADMIT_ASSERT(proto_ != nullptr, "only a protocol's reply is read by a rule of the user's");
  if (inconsistency_ || failure_) return;
  const bool acquire = req.op == redis::script_op::acquire;
  if (!why.empty()) {
    inconsistency_ = std::string(process_client_ ? "the process client's " : "the protocol's ") +
                     (acquire ? "acquire" : "renew") + " replied " + shown(answer) +
                     " for token " + req.token + " (worker " + std::to_string(wi) + ") at " +
                     span_text(sched_.now_ns()) + ": " + why;
    facts_.publish(fact::reply_inconsistent{wi, req.token});
    sched_.stop();
    return;
  }
  inconsistency_ = "the protocol's " + std::string(acquire ? "acquire" : "renew") + " replied " + shown(answer) +
                   " for token " + req.token + " (worker " + std::to_string(wi) + ") at " +
                   span_text(sched_.now_ns()) + ", which its rule " + redis::describe(rule) + " reads as " +
                   (acquire ? "a grant" : "a kept permit") + ", but the token is not among the holders at \"" +
                   holders_key_ + "\" (the protocol's holders): either the rule reads a refusal as " +
                   (acquire ? "a grant" : "kept") + ", or holders does not describe where the script keeps its permits";
  facts_.publish(fact::reply_inconsistent{wi, req.token});
  sched_.stop();
}

redis::reply server_side::execute_command(std::size_t wi, const gate::command_request& req) {
  ADMIT_ASSERT(proto_ != nullptr, "a protocol's command reaches a server that runs that protocol");
  ADMIT_ASSERT(wi < fleet_.size() && !req.argv.empty(), "a command of a worker of the fleet");
  ADMIT_ASSERT(node_members_ == nullptr || node_index_ < node_members_->size(), "a quorum node's own count slot");
  const vtime_ns now = sched_.now_ns();
  const std::int64_t now_us = node_.server_now_us(now);
  notice_expiry(now_us);
  // The holders before the command, to see whose permits it takes.
  holders_before_count_ = 0;
  bool was_member = false;
  if (const redis::sorted_set* set = node_.set_view(holders_key_, now_us)) {
    if (holders_before_.size() < set->size()) {
      holders_before_.resize(set->size());
      holders_before_scores_.resize(set->size());
    }
    for (const redis::sorted_set::entry& e : set->entries()) {
      holders_before_scores_[holders_before_count_] = e.score;
      holders_before_[holders_before_count_++].assign(e.member);
    }
    was_member = set->score(req.token).has_value();
  }
  const std::span<const std::string> before(holders_before_.data(), holders_before_count_);
  const redis::reply answer = node_.run_command(now, now_us, req.argv);
  if (process_client_) [[unlikely]]
    return process_command(wi, req, answer, before, was_member, now_us);
  const redis::protocol_call& c = proto_->call(req.op);
  if (answer.is_error() && !(answer.text.rfind("NOSCRIPT", 0) == 0 && !c.is_command())) {
    // The user's script (or command) failed: nothing after it is judged.
    script_failed(wi, req);
    return answer;
  }
  if (req.op == redis::script_op::acquire && node_.names_permits()) [[unlikely]] {
    if (const std::string_view id = redis::permit_of(answer, c.rule); !id.empty()) {
      const std::string* other = node_.token_of_permit(id);
      if (other != nullptr && *other != req.token && std::find(before.begin(), before.end(), *other) != before.end()) {
        protocol_inconsistent(wi, req, answer, c.rule,
                              "that permit id is the one token " + *other +
                                  " still held before this call: the script handed one permit to two grants");
        return answer;
      }
      node_.name_permit(id, req.token);
    }
  }
  const redis::sorted_set* after = node_.set_view(holders_key_, now_us);
  std::int64_t members = after ? static_cast<std::int64_t>(after->size()) : 0;
  notice_losses(wi, req, before, after, now_us);
  const bool quorum = node_members_ != nullptr;
  if (req.op == redis::script_op::release) {
    const worker_state& w = fleet_[wi];
    // Every way a permit leaves the set while its holder works is noticed: by the
    // diff above, by the key's expiry, or with the node's state. A quorum permit
    // need not be on every node: only on those that granted it.
    if (w.holding && *w.holding == req.token && !before.empty())
      ADMIT_ASSERT(was_member || w.lost || (quorum && !fleet_.held_on(wi, node_index_)),
                   "a worker releasing a permit it holds has it in the set, or was told it lost it");
    if (quorum) fleet_.released_on(wi, req.token, node_index_);
  }
  if (quorum) [[unlikely]] {
    // Each node's set is checked against the limit: the monitors see the fullest node.
    (*node_members_)[node_index_] = members;
    for (const std::int64_t m : *node_members_) members = std::max(members, m);
  }
  const redis::script_reply read = redis::read_reply(answer, c.rule);
  // check_then_add's acquire is the count: its "yes" adds nothing (the add is its second round trip).
  const bool counted = req.op == redis::script_op::acquire && mut_ == scenario::world_mutation::check_then_add;
  if (read.granted() && (req.op == redis::script_op::acquire || req.op == redis::script_op::renew) && !counted &&
      !(after != nullptr && after->score(req.token).has_value())) [[unlikely]] {
    // A grant the holders do not show: nothing after it can be judged (the user's rule or holders, not ours).
    protocol_inconsistent(wi, req, answer, c.rule);
    return answer;
  }
  if (read.granted()) {
    if (counted) [[unlikely]]
      facts_.publish(fact::permit_counted{wi, members});  // the count; its grant is the add, a round trip later
    else if (req.op == redis::script_op::acquire && quorum) {
      if (fleet_.granted_on(wi, req.token, node_index_)) granted(wi, req.token);
    } else if (req.op == redis::script_op::acquire && !was_member)
      granted(wi, req.token);
    else if (req.op == redis::script_op::renew)
      renewed(wi, req.token);
  }
  // NOSCRIPT: the acquire's script did not run (the client sends its body next), so it reaped nothing yet.
  const bool noscript = answer.is_error();
  const bool judged = req.op == redis::script_op::acquire && !noscript;
  // The now the script compared scores with: the caller's, when the acquire passes it whole as an argument
  // ({now_ms} or {expiry_ms}).
  const auto script_now = [&] { return command_now_ms(req, now_us); };
  const auto reply_text = [&] {
    return shown(answer) + " (read by the rule " + redis::describe(c.rule) + ")";
  };
  // A counter that is missing (not set up yet, or wiped with the node's state) is not judged: the next
  // set-up sets it, and what it sets it to is the gate's count (gate_inflight_le_cap) to judge. A quorum's
  // counters are not judged.
  std::optional<std::int64_t> free;
  if (free_key_ && !quorum) free = node_.peek_integer(*free_key_, now_us);
  // A release is traced with the server's number when it answers one (a ZREM's count: 0 for a token that held no
  // permit, as a waiter's that gave up), as a built-in's is: under the default rule `any` every release reads as yes.
  redis::script_reply traced = read;
  if (req.op == redis::script_op::release && answer.type == redis::reply::kind::integer) traced.value = answer.integer;
  facts_.publish(fact::script_ran{
      .worker = wi,
      .op = req.op,
      .token = req.token,
      .reply = traced,
      .members = members,
      .was_member = was_member && req.op == redis::script_op::acquire,
      .judged = judged,
      .holders_after = after,
      .server_now_ms = now_us / 1000,
      .expiry_offset_ms = proto_->holders.scores == redis::score_meaning::acquired_at ? lease_ms_ : 0,
      .script_now_ms = script_now,
      .script_now_callers = callers_now(req),
      // A quorum's node refuses what a majority may still grant: its progress is the fleet's, not a node's.
      .progress = judged && !quorum && !counted,
      .reply_text = reply_text,
      .free = free,
      .held = free && after ? static_cast<std::int64_t>(after->size()) : 0});
  return answer;
}

bool server_side::callers_now(const gate::command_request& req) const {
  if (process_client_) [[unlikely]]
    return caller_now_ms(req).has_value();
  return now_args_[static_cast<std::size_t>(req.op)].index >= 0;
}

redis::reply server_side::process_command(std::size_t wi, const gate::command_request& req, const redis::reply& answer,
                                          std::span<const std::string> before, bool was_member, std::int64_t now_us) {
  ADMIT_ASSERT(process_client_ && node_members_ == nullptr, "a process client's call, on a one-node run");
  // Whatever the child sent, and whatever it answered (an error goes back to the child's client): the
  // holders before and after say what it did.
  const redis::sorted_set* after = node_.set_view(holders_key_, now_us);
  const std::int64_t members = after ? static_cast<std::int64_t>(after->size()) : 0;
  const bool member_after = after != nullptr && after->score(req.token).has_value();
  notice_losses(wi, req, before, after, now_us);
  if (after != nullptr && req.op != redis::script_op::release) {
    // Every member a call adds must be its operation's token: admitsim names each permit by the token it
    // gave the child (the adapter's uuid4() returns it), and judges each by the worker that token names.
    for (const redis::sorted_set::entry& e : after->entries()) {
      if (e.member == req.token || std::find(before.begin(), before.end(), e.member) != before.end()) continue;
      protocol_inconsistent(wi, req, answer, redis::reply_read{},
                            "the call added the member \"" + scenario::printable(e.member.substr(0, 80)) +
                                "\" to the holders at \"" + holders_key_ + "\", not the operation's token " +
                                req.token + ": a process client must name its permit by the token admitsim gives it "
                                "(the Python adapter's uuid.uuid4() returns it once per acquire; docs/process-gate.md)");
      return answer;
    }
  }
  redis::script_reply read;
  if (answer.is_error()) read.error = answer.text;
  switch (req.op) {
    case redis::script_op::acquire: read.value = member_after && !was_member ? 1 : 0; break;
    case redis::script_op::renew: read.value = member_after ? 1 : 0; break;
    case redis::script_op::release: read.value = answer.type == redis::reply::kind::integer ? answer.integer : 1; break;
  }
  if (read.ok() && read.value > 0) {
    if (req.op == redis::script_op::acquire) granted(wi, req.token);
    else if (req.op == redis::script_op::renew) renewed(wi, req.token);
  }
  // A script's acquire is judged as one atomic step (it must reap what expired, and its refusals count
  // toward liveness); a plain command of a several-call acquire is not one.
  const std::string& name = req.argv.front();
  const bool script = redis::equals_ci(name, "EVAL") || redis::equals_ci(name, "EVALSHA") ||
                      redis::equals_ci(name, "EVAL_RO") || redis::equals_ci(name, "EVALSHA_RO") ||
                      redis::equals_ci(name, "FCALL");
  const bool judged = req.op == redis::script_op::acquire && script && !answer.is_error();
  const auto script_now = [&] { return command_now_ms(req, now_us); };
  const auto reply_text = [&] { return shown(answer) + " (the reply to the child's " + scenario::printable(name.substr(0, 20)) + ")"; };
  facts_.publish(fact::script_ran{
      .worker = wi,
      .op = req.op,
      .token = req.token,
      .reply = read,
      .members = members,
      .was_member = was_member && req.op == redis::script_op::acquire,
      .judged = judged,
      .holders_after = after,
      .server_now_ms = now_us / 1000,
      .expiry_offset_ms = proto_->holders.scores == redis::score_meaning::acquired_at ? lease_ms_ : 0,
      .script_now_ms = script_now,
      .script_now_callers = callers_now(req),
      .progress = judged,
      .reply_text = reply_text,
      .free = std::nullopt,
      .held = 0});
  return answer;
}

}  // namespace admit::world::lease

namespace admit::world::lease {

void server_side::add_after_check(std::size_t wi, const gate::command_request& req) {
  ADMIT_ASSERT(mut_ == scenario::world_mutation::check_then_add, "only the mutant adds after its count");
  ADMIT_ASSERT(wi < fleet_.size() && req.op == redis::script_op::acquire, "the add of a worker's acquire");
  const vtime_ns now = sched_.now_ns();
  const std::int64_t now_us = node_.server_now_us(now);
  notice_expiry(now_us);
  // Scored as the count's script scores: by the caller's now when its acquire passed one, else the server's.
  const std::int64_t members =
      node_.add_after_check(now, now_us, holders_key_, req.token, command_now_ms(req, now_us), lease_ms_);
  ADMIT_ASSERT(members >= 1, "the add leaves at least its own member");
  granted(wi, req.token);
  facts_.publish(fact::split_add{wi, req.token, members});
}

}  // namespace admit::world::lease
