#include "sim/world/lease/redis_node.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "gate/admit_assert.hpp"

namespace admit::world::lease {

const redis::sorted_set* redis_node::as_set(const redis::hash_value* h, hash_memo& memo) {
  if (h == nullptr) return nullptr;
  const std::span<const redis::hash_value::field> fields = h->fields();
  if (std::equal(fields.begin(), fields.end(), memo.source.begin(), memo.source.end())) {
    ADMIT_ASSERT(memo.set.size() == h->size(), "a memo's set holds its source's fields");
    return &memo.set;
  }
  memo.set = redis::sorted_set{};
  for (const redis::hash_value::field& f : fields) {
    double score = std::numeric_limits<double>::infinity();
    const char* first = f.value.data();
    const char* last = first + f.value.size();
    double parsed = 0;
    if (const auto [end, ec] = std::from_chars(first, last, parsed); ec == std::errc{} && end == last && std::isfinite(parsed))
      score = parsed;
    memo.set.insert_or_assign(score, f.name);
  }
  memo.source.assign(fields.begin(), fields.end());
  ADMIT_ASSERT(memo.set.size() == h->size(), "a hash's fields are distinct members");
  return &memo.set;
}

const redis::sorted_set* redis_node::named(const redis::sorted_set* s, named_memo& memo) const {
  if (s == nullptr) return nullptr;
  const std::span<const redis::sorted_set::entry> entries = s->entries();
  if (memo.made && memo.names_version == names_version_ &&
      std::equal(entries.begin(), entries.end(), memo.source.begin(), memo.source.end())) {
    ADMIT_ASSERT(memo.set.size() == s->size(), "a memo's set names its source's members");
    return &memo.set;
  }
  memo.set = redis::sorted_set{};
  std::string name;
  for (const redis::sorted_set::entry& e : entries) {
    if (const std::string* token = token_of_permit(e.member)) {
      name.assign(*token);
    } else {
      name.assign("permit:");
      name.append(e.member);
    }
    memo.set.insert_or_assign(e.score, name);
  }
  memo.source.assign(entries.begin(), entries.end());
  memo.names_version = names_version_;
  memo.made = true;
  // Distinct: each token names one id (name_permit), and "permit:" never begins a token ("w<worker>-<item>").
  ADMIT_ASSERT(memo.set.size() == s->size(), "each member of the holders keeps a name of its own");
  return &memo.set;
}

void redis_node::name_permit(std::string_view id, std::string_view token) {
  ADMIT_ASSERT(permit_ids_ && !token.empty(), "a token's permit id is named in a world that names permit ids");
  ADMIT_ASSERT(token.rfind("permit:", 0) != 0, "a token is never named like an unnamed permit");
  if (const auto old = token_of_permit_.find(id); old != token_of_permit_.end()) {
    if (old->second == token) return;
    ++names_version_;
    // The id named another token's permit: that grant is over (the caller checked it no longer holds it).
    permit_of_token_.erase(old->second);
    token_of_permit_.erase(old);
  }
  ++names_version_;
  const auto [it, fresh] = permit_of_token_.try_emplace(std::string(token), id);
  if (!fresh) {
    token_of_permit_.erase(it->second);
    it->second.assign(id);
  }
  token_of_permit_.insert_or_assign(std::string(id), std::string(token));
  ADMIT_ASSERT(token_of_permit_.size() == permit_of_token_.size(), "ids and tokens name each other one to one");
}

std::optional<std::int64_t> redis_node::peek_integer(std::string_view key, std::int64_t now_us) const {
  const std::string* v = primary_.peek<std::string>(key, now_us);
  if (v == nullptr) return std::nullopt;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc{} || end != v->data() + v->size()) return std::nullopt;
  return n;
}

redis_node::redis_node(std::span<const scenario::fault_spec> faults) {
  set_index(0);
  for (const auto& f : faults) {
    if (f.kind == scenario::fault_kind::redis_failover) max_lag_ns_ = std::max(max_lag_ns_, f.replication_lag_ns);
    if (f.kind == scenario::fault_kind::redis_restart && f.persist == scenario::persistence::aof_everysec)
      keep_aof_ = true;
  }
}

void redis_node::set_index(std::size_t index) {
  ADMIT_ASSERT(processes_ == 2, "a node is named before any restart or failover");
  index_ = index;
  primary_facts_ = {redis::make_run_id(index_, 0), server_now_us(0)};
  follower_facts_ = {redis::make_run_id(index_, 1), server_now_us(0)};
}

void redis_node::replicate_upto(vtime_ns upto) {
  while (!log_.empty() && log_.front().at_ns <= upto) {
    const logged_op& op = log_.front();
    op.effects.apply_to(follower_, op.server_now_us);
    log_.pop_front();
  }
}

void redis_node::aof_tick(vtime_ns now) {
  // AOF every second: the copy a restart would recover is the state at the
  // last whole second of activity.
  const vtime_ns second = now / sim::sec;
  if (keep_aof_ && second != aof_second_) {
    aof_copy_ = primary_;
    aof_second_ = second;
  }
}

redis::script_engine& redis_node::engine_of(redis::replica& r) {
  std::unique_ptr<redis::script_engine>& e = &r == &primary_ ? primary_engine_ : follower_engine_;
  ADMIT_ASSERT(&r == &primary_ || &r == &follower_, "an engine runs over the primary or the follower");
  if (!e) {
    e = std::make_unique<redis::script_engine>(r, limits_);
    e->set_native_twins(native_twins_);
    // The follower's PUBLISH reaches nobody: the clients listen on the primary.
    if (&r == &primary_) e->set_pubsub(bus_);
    e->set_server_facts(&r == &primary_ ? &primary_facts_ : &follower_facts_);
  }
  return *e;
}

redis::reply redis_node::run_command(vtime_ns now, std::int64_t now_us, std::span<const std::string> argv) {
  aof_tick(now);
  if (max_lag_ns_ > 0) replicate_upto(now - max_lag_ns_);
  redis::script_engine& primary = engine_of(primary_);
  if (max_lag_ns_ == 0) return primary.execute(argv, now_us);
  logged_op op{now, now_us};
  primary.set_effects(&op.effects);
  redis::reply answer;
  try {
    answer = primary.execute(argv, now_us);
  } catch (...) {
    primary.set_effects(nullptr);
    throw;
  }
  primary.set_effects(nullptr);
  const bool noscript = answer.is_error() && answer.text.rfind("NOSCRIPT", 0) == 0;
  ADMIT_ASSERT(!noscript || op.effects.empty(), "a script the cache did not hold wrote nothing");
  if (!noscript) log_.push_back(std::move(op));
  return answer;
}

void redis_node::deploy(const redis::protocol& proto) {
  for (const redis::protocol_script& s : proto.scripts) {
    // A script that does not compile stays out of the cache: its first call answers the compile error.
    (void)engine_of(primary_).script_load(s.source);
    if (max_lag_ns_ > 0) (void)engine_of(follower_).script_load(s.source);
  }
}

const redis::script_error_info& redis_node::last_script_error() const {
  ADMIT_ASSERT(primary_engine_ != nullptr, "a script failed only where a protocol's command ran");
  return primary_engine_->last_error();
}

std::uint64_t redis_node::last_script_steps() const {
  return primary_engine_ ? primary_engine_->steps_of_last_call() : 0;
}

std::int64_t redis_node::add_after_check(vtime_ns now, std::int64_t now_us, std::string_view key,
                                        std::string_view token, std::int64_t score_ms, std::int64_t lease_ms) {
  ADMIT_ASSERT(lease_ms > 0, "a lease of at least 1 ms");
  const std::string add[] = {"ZADD", std::string(key), std::to_string(score_ms), std::string(token)};
  const std::string expire[] = {"PEXPIRE", std::string(key), std::to_string(lease_ms)};
  const redis::reply added = run_command(now, now_us, add);
  const redis::reply expiring = run_command(now, now_us, expire);
  ADMIT_ASSERT(!added.is_error(), "the mutant's add finds the set it counted (or none)");
  ADMIT_ASSERT(!expiring.is_error(), "the mutant's PEXPIRE names its own key");
  const redis::sorted_set* set = set_view(key, now_us);
  return set ? static_cast<std::int64_t>(set->size()) : 0;
}

redis_node::wait_outcome redis_node::wait_for_replica(vtime_ns now, vtime_ns timeout_ns) const {
  ADMIT_ASSERT(timeout_ns > 0, "a WAIT of the lease client has a positive timeout");
  // Every entry of the log is a command the primary ran (the newest last); the
  // follower has applied an entry once it is one lag old.
  const vtime_ns applied_at = log_.empty() ? now : std::max(now, log_.back().at_ns + max_lag_ns_);
  ADMIT_ASSERT(log_.empty() || log_.back().at_ns <= now, "the log holds no write from the future");
  if (applied_at <= now + timeout_ns) return wait_outcome{applied_at, 1};
  return wait_outcome{now + timeout_ns, 0};
}

void redis_node::restart(scenario::persistence persist, vtime_ns now, vtime_ns down_ns) {
  // aof_always: every write was durable before its reply, so the restarted server has every key (and
  // each key's deadline, an absolute time) as it was; aof_everysec: what the last whole second wrote.
  if (persist == scenario::persistence::aof_everysec)
    primary_ = aof_copy_;
  else if (persist == scenario::persistence::none)
    primary_ = redis::replica{};
  follower_ = primary_;
  log_.clear();
  ++generation_;
  down_until_ns_ = now + down_ns;
  primary_facts_ = {redis::make_run_id(index_, processes_++), server_now_us(down_until_ns_)};
  // A restarted server has an empty script cache: the next EVALSHA answers NOSCRIPT.
  if (primary_engine_) primary_engine_->script_flush();
  if (follower_engine_) follower_engine_->script_flush();
}

void redis_node::failover(vtime_ns replication_lag_ns, vtime_ns now, vtime_ns down_ns) {
  // The follower has applied every write older than the lag; newer ones are lost.
  ADMIT_ASSERT(replication_lag_ns <= max_lag_ns_, "a failover's lag is at most the follower's (what WAIT counts by)");
  if (max_lag_ns_ == 0)
    follower_ = primary_;  // no lag: the follower kept no log, it has every write
  else
    replicate_upto(now - replication_lag_ns);
  log_.clear();
  ++generation_;
  primary_ = follower_;
  if (keep_aof_) aof_copy_ = primary_;
  down_until_ns_ = now + down_ns;
  primary_facts_ = follower_facts_;
  follower_facts_ = {redis::make_run_id(index_, processes_++), server_now_us(down_until_ns_)};
  // The promoted follower never cached the scripts the clients loaded on the old primary.
  if (primary_engine_) primary_engine_->script_flush();
}

}  // namespace admit::world::lease
