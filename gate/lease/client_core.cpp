#include "gate/lease/client_core.hpp"

#include <string>
#include <utility>

#include "gate/redis/sha1.hpp"

namespace admit::gate {

client_core::client_core(lease_client_config cfg, std::function<std::int64_t(std::int64_t)> jitter_ns)
    : cfg_(std::move(cfg)), jitter_ns_(std::move(jitter_ns)) {
  ADMIT_ASSERT(cfg_.proto != nullptr, "a client runs a protocol");
  ADMIT_ASSERT(cfg_.acquire_timeout_ns >= 0, "an acquire timeout is not negative");
  for (const redis::protocol_script& s : cfg_.proto->scripts)
    shas_.push_back(s.sha.empty() ? redis::sha1_hex(s.source) : s.sha);
}

client_core::op::op(client_core& core, op_kind kind, std::string token, std::size_t nodes)
    : core_(core), kind_(kind), nodes_(nodes), token_(std::move(token)), base_token_size_(token_.size()) {
  ADMIT_ASSERT(nodes_ >= 1, "a client reaches at least one node");
  ADMIT_ASSERT(nodes_ == 1 || core_.cfg_.quorum, "only a quorum client's operation runs on several nodes");
}

void client_core::op::advance_clock(const moment& m) {
  ADMIT_ASSERT(m.mono_ns >= last_mono_ns_, "the monotonic clock only moves forward");
  last_mono_ns_ = m.mono_ns;
}

lease_step client_core::op::start(const moment& m) {
  ADMIT_ASSERT(phase_ == phase::start, "an operation starts once");
  advance_clock(m);
  const bool quorum = core_.cfg_.quorum;
  switch (kind_) {
    case op_kind::acquire:
      deadline_ns_ = m.mono_ns + core_.cfg_.acquire_timeout_ns;
      // A wall clock reads whole milliseconds: the deadline is the first one at or after the timeout.
      deadline_wall_ms_ = m.wall_ms + (core_.cfg_.acquire_timeout_ns + 999'999) / 1'000'000;
      return attempt(m);
    case op_kind::release:
      phase_ = phase::release_call;
      return call(redis::script_op::release, quorum ? 0 : lease_step::one_node, m);
    case op_kind::renew:
      phase_ = phase::renew_call;
      return call(redis::script_op::renew, lease_step::one_node, m);
    case op_kind::setup:
      ADMIT_ASSERT(!quorum, "a quorum protocol has no set-up (the loader refuses it)");
      if (core_.cfg_.proto->setup.calls.empty()) return finish(lease_failure::none);
      phase_ = phase::setup_call;
      return setup_call(m);
  }
  ADMIT_ASSERT(false, "every operation kind starts");
  return finish(lease_failure::none);
}

std::int64_t client_core::op::until_deadline_ns(const moment& m) const noexcept {
  if (core_.cfg_.deadline_on_wall_clock) return (deadline_wall_ms_ - m.wall_ms) * 1'000'000;
  return deadline_ns_ - m.mono_ns;
}

lease_step client_core::op::attempt(const moment& m) {
  ++attempts_;
  if (core_.cfg_.quorum) {
    phase_ = phase::quorum_acquire;
    round_start_ns_ = m.mono_ns;
    round_granted_ = 0;
    round_answered_ = 0;
    return call(redis::script_op::acquire, 0, m);
  }
  phase_ = phase::acquire_call;
  return call(redis::script_op::acquire, lease_step::one_node, m);
}

redis::call_values client_core::op::values(std::int64_t wall_ms) const {
  const lease_client_config& cfg = core_.cfg_;
  redis::call_values v;
  v.key = cfg.key;
  v.token = token_;
  v.limit = cfg.limit;
  v.lease_ms = cfg.lease_ms;
  v.now_ms = wall_ms;
  v.queue_timeout_ms = cfg.queue_timeout_ms;
  v.permit = core_.permit_of(token_);
  return v;
}

lease_step client_core::op::call(redis::script_op which, std::size_t node, const moment& m) {
  ADMIT_ASSERT(node == lease_step::one_node || node < nodes_, "a call names one of the transport's nodes");
  call_op_ = which;
  node_ = node;
  lease_step s;
  s.node = node;
  call_wall_ms_ = m.wall_ms;
  by_eval_ = false;
  build_command(core_.cfg_.proto->call(which), true);
  s.k = lease_step::kind::command;
  return s;
}

void client_core::op::build_command(const redis::protocol_call& c, bool by_sha) {
  const redis::protocol& p = *core_.cfg_.proto;
  command_.op = call_op_;
  command_.proto = &p;
  command_.token.assign(token_);
  command_.timeout_ns = c.timeout_ns;
  const redis::call_values v = values(call_wall_ms_);
  std::vector<std::string>& argv = command_.argv;
  // The strings are assigned in place: an operation's calls reuse their capacity.
  if (c.is_command()) {
    argv.resize(c.command.size());
    for (std::size_t i = 0; i < c.command.size(); ++i) {
      argv[i].clear();
      redis::expand_into(c.command[i], v, argv[i]);
    }
    return;
  }
  argv.resize(3 + c.keys.size() + c.args.size());
  argv[0].assign(by_sha ? "EVALSHA" : "EVAL");
  argv[1].assign(by_sha ? core_.shas_[c.script] : p.scripts[c.script].source);
  argv[2].assign(std::to_string(c.keys.size()));
  std::size_t i = 3;
  for (const redis::arg_template& t : c.keys) {
    argv[i].clear();
    redis::expand_into(t, v, argv[i++]);
  }
  for (const redis::arg_template& t : c.args) {
    argv[i].clear();
    redis::expand_into(t, v, argv[i++]);
  }
  ADMIT_ASSERT(i == argv.size(), "every KEYS and ARGV entry is filled");
}

lease_step client_core::op::setup_call(const moment& m) {
  const redis::protocol& p = *core_.cfg_.proto;
  ADMIT_ASSERT(setup_index_ < p.setup.calls.size(), "a set-up call of the protocol's");
  const redis::protocol_call& c = p.setup.calls[setup_index_];
  call_wall_ms_ = m.wall_ms;
  command_.op = redis::script_op::acquire;  // for the gate as a whole; no caller's token
  command_.proto = &p;
  command_.token.clear();
  command_.timeout_ns = -1;
  const redis::call_values v = values(call_wall_ms_);
  std::vector<std::string>& argv = command_.argv;
  argv.clear();
  if (c.is_command()) {
    for (const redis::arg_template& t : c.command) argv.push_back(redis::expand(t, v));
  } else {
    argv = {"EVAL", p.scripts[c.script].source, std::to_string(c.keys.size())};
    for (const redis::arg_template& t : c.keys) argv.push_back(redis::expand(t, v));
    for (const redis::arg_template& t : c.args) argv.push_back(redis::expand(t, v));
  }
  lease_step s;
  s.k = lease_step::kind::command;
  s.node = lease_step::one_node;
  return s;
}

lease_step client_core::op::replied(const moment& m, bool lost, const redis::reply& answer) {
  advance_clock(m);
  reading_ = reading::none;
  if (phase_ == phase::setup_call) {
    const redis::protocol& p = *core_.cfg_.proto;
    if (lost || answer.is_error()) return finish(lease_failure::unreachable);
    if (!redis::read_reply(answer, p.setup.calls[setup_index_].rule).granted()) return finish(lease_failure::not_done);
    if (++setup_index_ == p.setup.calls.size()) return finish(lease_failure::none);
    return setup_call(m);
  }
  if (phase_ == phase::acknowledge) {
    // WAIT's answer: the grant counts once `replicas` replicas hold it.
    const redis::acknowledge_policy& ack = *core_.cfg_.proto->client.acknowledge;
    if (!lost && !answer.is_error() && answer.type == redis::reply::kind::integer && answer.integer >= ack.replicas)
      return finish(lease_failure::none, fence_);
    // Too few (the attempt reads as refused), or no answer (as Redis unreachable): release the permit once
    // (best effort: its failure is not retried, the lease's expiry is the backstop).
    unreachable_ = lost || answer.is_error() || answer.type != redis::reply::kind::integer;
    phase_ = phase::unacknowledged;
    return call(redis::script_op::release, lease_step::one_node, m);
  }
  const redis::protocol_call& c = core_.cfg_.proto->call(call_op_);
  if (!lost && call_op_ == redis::script_op::acquire && kind_ == op_kind::acquire &&
      core_.cfg_.proto->grants_permit_ids()) [[unlikely]]
    permit_.assign(redis::permit_of(answer, c.rule));
  if (!lost && !c.is_command() && !by_eval_ && answer.is_error() && answer.text.rfind("NOSCRIPT", 0) == 0) {
    // The server has lost its script cache: send the body once, with the same values.
    by_eval_ = true;
    build_command(c, false);
    lease_step s;
    s.k = lease_step::kind::command;
    s.node = node_;
    return s;
  }
  if (lost) return answered(m, true, redis::script_reply{});
  const redis::script_reply read = redis::read_reply(answer, c.rule);
  if (phase_ == phase::acquire_call && !answer.is_error())
    reading_ = read.granted() ? reading::granted : reading::refused;
  return answered(m, false, read);
}

lease_step client_core::op::answered(const moment& m, bool lost, const redis::script_reply& read) {
  const lease_client_config& cfg = core_.cfg_;
  const auto nodes = static_cast<std::int64_t>(nodes_);
  switch (phase_) {
    case phase::acquire_call:
      if (!lost && read.granted() && cfg.proto->client.acknowledge) {
        fence_ = read.value;
        phase_ = phase::acknowledge;
        const redis::acknowledge_policy& ack = *cfg.proto->client.acknowledge;
        command_.op = redis::script_op::acquire;  // part of the acquire, to a simulated server's monitors
        command_.proto = cfg.proto.get();
        command_.token.assign(token_);
        command_.argv = {"WAIT", std::to_string(ack.replicas), std::to_string(ack.timeout_ms)};
        command_.timeout_ns = -1;  // the transport's socket timeout, past WAIT's own
        lease_step s;
        s.k = lease_step::kind::command;
        s.node = lease_step::one_node;
        return s;
      }
      if (!lost && read.granted()) return finish(lease_failure::none, read.value);
      if (lost && cfg.proto->client.on_lost_acquire == redis::lost_call_action::give_up) [[unlikely]]
        return give_up(m, lease_failure::unreachable);
      if (lost && cfg.proto->client.on_lost_acquire == redis::lost_call_action::new_token) [[unlikely]] {
        // The next attempt asks under a fresh token: whatever the lost call was granted stays until it expires.
        token_.resize(base_token_size_);
        token_ += '.';
        token_ += std::to_string(++fresh_tokens_);
        permit_.clear();
      }
      return attempt_failed(m, lost || !read.ok());
    case phase::unacknowledged:
      return attempt_failed(m, unreachable_);
    case phase::quorum_acquire: {
      if (!lost && read.ok()) ++round_answered_;
      if (!lost && read.granted() && round_granted_++ == 0) fence_ = read.value;
      if (static_cast<std::int64_t>(++node_) < nodes) return call(redis::script_op::acquire, node_, m);
      const std::int64_t elapsed_ns = m.mono_ns - round_start_ns_;
      ADMIT_ASSERT(elapsed_ns >= 0, "a round ends after it starts");
      if (quorum_holds(nodes, round_granted_, cfg.lease_ms * 1'000'000, elapsed_ns, cfg.quorum_off_by_one,
                       cfg.quorum_all))
        return finish(lease_failure::none, fence_);
      // The round did not hold: release on every node (one that granted, or whose reply was lost, may hold it).
      unreachable_ = round_answered_ < quorum_of(nodes, cfg.quorum_off_by_one, cfg.quorum_all);
      phase_ = phase::quorum_release;
      return call(redis::script_op::release, 0, m);
    }
    case phase::quorum_release:
      if (static_cast<std::int64_t>(++node_) < nodes) return call(redis::script_op::release, node_, m);
      return attempt_failed(m, unreachable_);
    case phase::give_up_release:
      // Its outcome changes nothing: the give-up stands either way.
      if (cfg.quorum && static_cast<std::int64_t>(++node_) < nodes) return call(redis::script_op::release, node_, m);
      return finish(give_up_);
    case phase::release_call: {
      const lease_failure f = lost ? lease_failure::lost : read.ok() ? lease_failure::none : lease_failure::unreachable;
      if (!cfg.quorum) return finish(f);
      if (first_failure_ == lease_failure::none) first_failure_ = f;
      if (static_cast<std::int64_t>(++node_) < nodes) return call(redis::script_op::release, node_, m);
      return finish(first_failure_);
    }
    case phase::renew_call:
      // Kept only when Redis confirmed it: a lost call or an error fails closed.
      return finish(lease_failure::none, !lost && read.granted() ? 1 : 0);
    case phase::start:
    case phase::setup_call:
    case phase::acknowledge:
    case phase::backoff:
    case phase::done:
      break;
  }
  ADMIT_ASSERT(false, "an answer comes only to a call in flight");
  return finish(lease_failure::none);
}

lease_step client_core::op::attempt_failed(const moment& m, bool unreachable) {
  const lease_client_config& cfg = core_.cfg_;
  ADMIT_ASSERT(kind_ == op_kind::acquire && attempts_ >= 1, "an attempt belongs to an acquire");
  const std::int64_t now = m.mono_ns;
  const std::int64_t left_ns = until_deadline_ns(m);
  if (left_ns <= 0) return give_up(m, unreachable ? lease_failure::unreachable : lease_failure::acquire_timeout);
  std::int64_t wait = cfg.backoff.ceiling_ns(attempts_);
  if (cfg.backoff.exponential && cfg.backoff.full_jitter) {
    const std::int64_t ceiling = wait;
    wait = core_.jitter_ns_(ceiling);
    ADMIT_ASSERT(wait >= 0, "full jitter draws no negative wait");
    ADMIT_ASSERT(wait <= ceiling, "full jitter draws no wait above its ceiling");
  }
  if (wait > left_ns) wait = left_ns;  // one last attempt at the deadline
  phase_ = phase::backoff;
  lease_step s;
  s.k = lease_step::kind::wait;
  s.until_ns = now + wait;
  if (cfg.proto->client.wake_on) {
    // Listen for a release while waiting: a message ends the wait (the attempt comes at once).
    if (channel_.empty()) channel_ = redis::expand(*cfg.proto->client.wake_on, values(0));
    s.wake = true;
  }
  return s;
}

lease_step client_core::op::give_up(const moment& m, lease_failure why) {
  ADMIT_ASSERT(why == lease_failure::unreachable || why == lease_failure::acquire_timeout, "an acquire gives up for a reason");
  give_up_ = why;
  if (core_.cfg_.on_give_up != redis::give_up_action::release) return finish(give_up_);
  // Leave whatever the server keeps of this token (a place in line; a grant whose reply was lost): once,
  // best effort.
  phase_ = phase::give_up_release;
  return call(redis::script_op::release, core_.cfg_.quorum ? 0 : lease_step::one_node, m);
}

lease_step client_core::op::woke(const moment& m) {
  advance_clock(m);
  ADMIT_ASSERT(phase_ == phase::backoff, "only a backoff waits");
  return attempt(m);
}

lease_step client_core::op::finish(lease_failure failure, std::int64_t value) {
  phase_ = phase::done;
  if (core_.cfg_.proto->grants_permit_ids()) [[unlikely]] {
    // The permit id the grant carried is the token's from now on; a release ends it.
    if (kind_ == op_kind::acquire && failure == lease_failure::none) {
      ADMIT_ASSERT(!permit_.empty(), "a grant read by the rule permit_id carries its permit id");
      core_.permits_.insert_or_assign(token_, permit_);
    } else if (kind_ == op_kind::release) {
      if (const auto it = core_.permits_.find(token_); it != core_.permits_.end()) core_.permits_.erase(it);
    }
  }
  lease_step s;
  s.k = lease_step::kind::done;
  s.failure = failure;
  s.value = value;
  s.attempts = attempts_;
  return s;
}

}  // namespace admit::gate
