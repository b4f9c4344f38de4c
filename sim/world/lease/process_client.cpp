#include "sim/world/lease/process_client.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "gate/admit_assert.hpp"
#include "sim/world/lease/process_messages.hpp"

namespace admit::world::lease {

namespace {
using json = nlohmann::ordered_json;

redis::script_op script_op_of(gate::client_core::op_kind k) {
  switch (k) {
    case gate::client_core::op_kind::release: return redis::script_op::release;
    case gate::client_core::op_kind::renew: return redis::script_op::renew;
    case gate::client_core::op_kind::acquire:
    case gate::client_core::op_kind::setup: break;
  }
  return redis::script_op::acquire;
}

constexpr const char* expected_step =
    "{\"command\":[ARG,...]}, {\"wait_until\":NS} (not before now; with \"then\":STEP only where the request "
    "offered \"ahead\") or {\"done\":OUTCOME} (an end of the operation)";
}  // namespace

process_client::process_client(const scenario::process_spec& spec, std::size_t worker, std::uint64_t seed,
                               const gate::lease_client_config& cfg, sim::scheduler& sched)
    : spec_(spec), worker_(worker), seed_(seed), cfg_(cfg), sched_(sched) {
  ADMIT_ASSERT(!spec_.command.empty(), "a process client names a command");
}

process_client::~process_client() {
  // The run is over: the session sends this as it ends, and a child that answers goes back to the pool.
  if (session_) session_->set_stop_request(msg::stop{last_now_ns_}.to_json());
}

process::session* process_client::session_for(const gate::moment& m) {
  if (failure_) return nullptr;
  if (session_) return &*session_;
  session_.emplace(spec_);
  if (const process::session_failure* f = session_->failed()) {
    failure_ = *f;
    sched_.stop();
    return nullptr;
  }
  const msg::start st{seed_, worker_, generation_, m.mono_ns, m.wall_ms, &cfg_};
  ++messages_;
  const std::optional<bool> ok = session_->ask(st.to_json(), "{\"ok\":true}", [](const json& a) {
    codec::expect_only_keys(a, "", {"ok"});
    if (!codec::read_bool(a, "", "ok")) throw codec::codec_error("/ok", "expected true, got false");
    return true;
  });
  if (!ok) {
    ADMIT_ASSERT(session_->failed() != nullptr, "a start without an answer failed the session");
    failure_ = *session_->failed();
    sched_.stop();
    return nullptr;
  }
  return &*session_;
}

gate::lease_step process_client::unreachable() {
  gate::lease_step s;
  s.k = gate::lease_step::kind::done;
  s.failure = gate::lease_failure::unreachable;
  return s;
}

gate::lease_step process_client::fail(std::string kind, std::string detail) {
  if (!failure_) {
    if (session_ && !session_->failed()) session_->fail(std::move(kind), std::move(detail));
    if (session_ && session_->failed()) failure_ = *session_->failed();
    else failure_ = process::session_failure{std::move(kind), std::move(detail)};
    sched_.stop();
  }
  return unreachable();
}

gate::remote_logic::op_id process_client::open(gate::client_core::op_kind kind, const std::string& token) {
  ADMIT_ASSERT(kind != gate::client_core::op_kind::setup, "a process client has no set-up operation of ours");
  ADMIT_ASSERT(std::none_of(ops_.begin(), ops_.end(), [](const auto& o) { return o.second.ahead.has_value(); }),
               "no operation opens while another has run ahead (the world promised its child no other input)");
  const op_id id = next_op_++;
  op_state& op = ops_[id];
  op.kind = kind;
  op.token = token;
  op.generation = generation_;
  return id;
}

void process_client::close(op_id op) noexcept { ops_.erase(op); }

const gate::command_request& process_client::command(op_id op) const noexcept {
  const auto it = ops_.find(op);
  ADMIT_ASSERT(it != ops_.end() && it->second.commands > 0, "the command of an open operation that sent one");
  return it->second.cmd;
}

void process_client::crashed() {
  if (session_) session_->kill();
  session_.reset();
  ++generation_;
}

std::optional<msg::ahead> process_client::offer_for(const op_state& op, const gate::moment& m) const {
  if (!promise_ || failure_ || op.kind != gate::client_core::op_kind::acquire || ops_.size() != 1) return std::nullopt;
  std::optional<msg::ahead> p = promise_(m.mono_ns);
  if (!p || p->until_ns < m.mono_ns) return std::nullopt;
  ADMIT_ASSERT(p->wall_base_ns >= 0 && p->until_ns <= msg::ahead::last_until(p->wall_base_ns),
               "a promised wall clock is read without overflow up to its until");
  ADMIT_ASSERT(p->wall_ms_at(m.mono_ns) == m.wall_ms, "the promised wall clock reads the worker's clock now");
  return p;
}

void process_client::note_input(op_state& op, const gate::moment& m) {
  constexpr std::size_t walls_kept = 64;
  if (op.walls_ms.size() == walls_kept) op.walls_ms.erase(op.walls_ms.begin());
  op.walls_ms.push_back(m.wall_ms);
  last_now_ns_ = std::max(last_now_ns_, m.mono_ns);
}

gate::lease_step process_client::ask(op_state& op, const json& request, const gate::moment& m,
                                     const std::optional<msg::ahead>& offer) {
  if (op.generation != generation_) return unreachable();  // its worker crashed: its process is gone
  note_input(op, m);
  process::session* s = session_for(m);
  if (s == nullptr) return unreachable();
  ++messages_;
  const std::optional<msg::step> st = s->ask(request, expected_step, [&](const json& a) {
    return msg::read_step(a, op.kind, m.mono_ns, offer ? &*offer : nullptr);
  });
  if (!st) {
    ADMIT_ASSERT(s->failed() != nullptr, "an operation without a step failed the session");
    if (!failure_) {
      failure_ = *s->failed();
      sched_.stop();
    }
    return unreachable();
  }
  return step_of(op, *st, m, offer);
}

gate::lease_step process_client::step_of(op_state& op, const msg::step& st, const gate::moment& m,
                                         const std::optional<msg::ahead>& offer) {
  gate::lease_step s;
  switch (st.k) {
    case msg::step::kind::command:
      op.cmd.op = script_op_of(op.kind);
      op.cmd.proto = cfg_.proto.get();
      op.cmd.token = op.token;
      op.cmd.argv = st.argv;
      // With a timer of its own armed, the operation stops waiting for the reply when it fires.
      op.timeout_at_ns = st.timeout_at_ns;
      op.cmd.timeout_ns = st.timeout_at_ns ? std::max<std::int64_t>(1, *st.timeout_at_ns - m.mono_ns) : -1;
      op.cmd.caller_walls_ms = op.walls_ms;
      ++op.commands;
      s.k = gate::lease_step::kind::command;
      return s;
    case msg::step::kind::wait:
      ADMIT_ASSERT(st.until_ns >= m.mono_ns, "the reader refuses a wait before now");
      ADMIT_ASSERT(st.then.size() <= 1, "a wait runs ahead one wake-up at most");
      if (!st.then.empty()) {
        ADMIT_ASSERT(offer && st.until_ns <= offer->until_ns, "the reader refuses a step ahead that was not offered");
        op.ahead = op_state::answered_ahead{st.until_ns, offer->wall_ms_at(st.until_ns), st.then.front()};
      }
      s.k = gate::lease_step::kind::wait;
      s.until_ns = st.until_ns;
      return s;
    case msg::step::kind::done: break;
  }
  s.k = gate::lease_step::kind::done;
  s.attempts = op.commands;
  switch (st.out) {
    case msg::step::outcome::granted:
      if (op.commands == 0)
        return fail("process_protocol", (session_ ? session_->child_text() : std::string("the child")) + " of worker " + std::to_string(worker_) +
                                            " answered granted for token " + op.token +
                                            " without a call to Redis (the world counts a permit only a server granted)");
      s.value = st.value;
      return s;
    case msg::step::outcome::acquire_timeout: s.failure = gate::lease_failure::acquire_timeout; return s;
    case msg::step::outcome::unreachable: s.failure = gate::lease_failure::unreachable; return s;
    case msg::step::outcome::released: return s;
    case msg::step::outcome::lost:
      // Lost is a call's error, and only a call that was lost has one.
      s.failure = op.any_lost ? gate::lease_failure::lost : gate::lease_failure::unreachable;
      return s;
    case msg::step::outcome::kept: s.value = 1; return s;
    case msg::step::outcome::not_kept: s.value = 0; return s;
  }
  return s;
}

process_client::op_state& process_client::state_of(op_id id) {
  const auto it = ops_.find(id);
  ADMIT_ASSERT(it != ops_.end(), "an input for an operation the driver opened and has not closed");
  return it->second;
}

gate::lease_step process_client::start(op_id id, const gate::moment& m) {
  op_state& op = state_of(id);
  ADMIT_ASSERT(op.commands == 0 && !op.ahead, "an operation starts once");
  const std::optional<msg::ahead> offer = offer_for(op, m);
  msg::op_start in{op.kind, id, op.token, m.mono_ns, m.wall_ms};
  in.offer = offer ? &*offer : nullptr;
  return ask(op, in.to_json(), m, offer);
}

gate::lease_step process_client::replied(op_id id, const gate::moment& m, bool lost, const redis::reply& answer) {
  op_state& op = state_of(id);
  ADMIT_ASSERT(!op.ahead, "an operation that ran ahead waits on its timer, with no call in flight");
  const std::optional<msg::ahead> offer = offer_for(op, m);
  if (lost && op.timeout_at_ns && m.mono_ns >= *op.timeout_at_ns) {
    // No reply by the operation's own timer: that timer fired (the child settles the call it abandoned).
    op.timeout_at_ns.reset();
    msg::op_woke in{id, m.mono_ns, m.wall_ms};
    in.offer = offer ? &*offer : nullptr;
    return ask(op, in.to_json(), m, offer);
  }
  op.timeout_at_ns.reset();
  op.any_lost = op.any_lost || lost;
  msg::op_reply in{id, lost, lost ? nullptr : &answer, m.mono_ns, m.wall_ms};
  in.offer = offer ? &*offer : nullptr;
  return ask(op, in.to_json(), m, offer);
}

gate::lease_step process_client::woke(op_id id, const gate::moment& m) {
  op_state& op = state_of(id);
  if (op.ahead) {
    // The child answered this wake-up already, on the world's promise: no message goes.
    const op_state::answered_ahead a = std::move(*op.ahead);
    op.ahead.reset();
    ADMIT_ASSERT(m.mono_ns == a.at_ns && m.wall_ms == a.wall_ms,
                 "a wake-up answered ahead comes at its instant, with the wall clock promised");
    if (op.generation != generation_ || failure_) return unreachable();
    note_input(op, m);
    ++wakes_ahead_;
    return step_of(op, a.step, m, std::nullopt);
  }
  const std::optional<msg::ahead> offer = offer_for(op, m);
  msg::op_woke in{id, m.mono_ns, m.wall_ms};
  in.offer = offer ? &*offer : nullptr;
  return ask(op, in.to_json(), m, offer);
}

}  // namespace admit::world::lease
