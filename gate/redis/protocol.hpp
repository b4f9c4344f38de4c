// protocol: a lease semaphore's protocol as data.
//
// Model. A lease protocol is the Lua a team deploys plus the way its client
// calls it. The scripts are named sources. Each operation (acquire, release,
// and optionally renew) is either a script call, whose KEYS and ARGV are
// templates over the call's values, or (release only) a plain command. A
// reply rule says how a reply reads: granted / kept, or not. The client
// policy says how the caller behaves around the calls: how it retries an
// acquire, how long it waits in all, what it does when it gives up, how
// often it renews, what a lost renewal does to the work under it, and what a
// client timeout does to the permit. The holders rule says where the server
// keeps the permits and what a permit's score means, so that a checker can
// count the holders as the server sees them.
//
// Templates. An argument is literal text with placeholders in braces:
// {key} (the gate's key), {token} (the caller's identity for this
// acquisition), {limit}, {lease_ms}, {now_ms} (the caller's wall clock in
// ms), {expiry_ms} (now_ms + lease_ms), {queue_timeout_ms}, and {permit}
// (the permit id the caller's acquire was answered, for a protocol whose
// acquire reads its grant by the rule permit_id). "{{" and "}}" stand for
// literal braces. "{key}:fence" is the gate key with a suffix.
//
// This header is pure data and pure functions: no JSON, no Lua, no I/O. The
// scenario loader reads protocol files into it (sim/scenario/protocol_loader);
// the simulator and the Asio client both run it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/reply.hpp"

namespace admit::redis {

enum class placeholder : std::uint8_t { key, token, limit, lease_ms, now_ms, expiry_ms, queue_timeout_ms, permit };
inline constexpr const char* placeholder_names[] = {"key",    "token",     "limit",            "lease_ms",
                                                    "now_ms", "expiry_ms", "queue_timeout_ms", "permit"};

// One KEYS or ARGV entry: literal pieces and placeholders, in order.
struct arg_template {
  struct piece {
    std::string literal;                 // used when `value` is empty
    std::optional<placeholder> value;
    friend bool operator==(const piece&, const piece&) = default;
  };
  std::vector<piece> pieces;

  // Parses "{key}:fence"; nullopt with `why` set when a brace is unmatched or
  // a placeholder is unknown.
  static std::optional<arg_template> parse(std::string_view text, std::string& why);
  // The template as written (placeholders in braces, literal braces doubled).
  [[nodiscard]] std::string text() const;
  [[nodiscard]] bool uses(placeholder p) const noexcept;

  friend bool operator==(const arg_template&, const arg_template&) = default;
};

// The values one call fills its templates with.
struct call_values {
  std::string_view key;
  std::string_view token;
  std::int64_t limit = 0;
  std::int64_t lease_ms = 0;
  std::int64_t now_ms = 0;  // the caller's wall clock
  std::int64_t queue_timeout_ms = 0;
  std::string_view permit;  // the permit id the caller's acquire was answered (empty when it has none)
};

// Appends the expansion of `t` to `out`.
void expand_into(const arg_template& t, const call_values& v, std::string& out);
[[nodiscard]] std::string expand(const arg_template& t, const call_values& v);

// How a reply reads. Each rule names what counts as "yes" (granted, kept,
// released); anything else is "no", and an error reply is an error.
enum class reply_rule : std::uint8_t {
  equals_one,        // the integer 1
  positive_integer,  // an integer >= 1 (a fencing number)
  ok_status,         // the status reply OK
  not_nil,           // any reply but nil (and but an error)
  any,               // any reply that is not an error (a release whose answer is not read)
  permit_id,         // a non-empty bulk or status string: the permit's id, which later calls send as {permit}
};
inline constexpr const char* reply_rule_names[] = {"equals_1", "positive_integer", "ok", "not_nil", "any", "permit_id"};

// A rule and where it reads: the whole reply (element 0), or the element-th
// (from 1, as Lua counts) of an array reply, such as the first of a script's
// {granted, wait_ms}. A reply that is not an array, or too short, has no
// such element: it reads as "no" (an error reply still reads as an error).
struct reply_read {
  // A rule alone reads the whole reply.
  constexpr reply_read(reply_rule r = reply_rule::equals_one, std::size_t at = 0) noexcept : rule(r), element(at) {}  // NOLINT: implicit by design
  reply_rule rule;
  std::size_t element;

  friend bool operator==(const reply_read&, const reply_read&) = default;
};
inline constexpr std::size_t reply_element_max = 16;

// The reply as the client reads it: `value` > 0 means yes (the integer
// itself when the reply was a positive integer, else 1); `error` holds the
// error reply's text.
[[nodiscard]] script_reply read_reply(const reply& r, const reply_read& how);
// The permit id a granted reply carries under a permit_id rule (empty for any other rule, or no grant).
[[nodiscard]] std::string_view permit_of(const reply& r, const reply_read& how);
// "equals_1", or "element 2 is equals_1": the rule as a sentence names it.
[[nodiscard]] std::string describe(const reply_read& how);

struct protocol_script {
  std::string name;    // how the operations refer to it
  std::string origin;  // the file it came from ("inline" for a source in the protocol file)
  std::string source;  // the Lua text
  std::string sha;     // its SHA-1 in hex, what EVALSHA names it by (the loader computes it)

  friend bool operator==(const protocol_script&, const protocol_script&) = default;
};

// One operation: a script call, or (release only) a plain command.
struct protocol_call {
  std::size_t script = 0;              // index into protocol::scripts (script calls)
  std::vector<arg_template> command;   // a plain command's argv (empty for a script call)
  std::vector<arg_template> keys;
  std::vector<arg_template> args;
  reply_read rule;
  // How long the client waits for the reply: -1 the transport's own socket timeout (1s in the simulator),
  // 0 for ever, otherwise this many ns. A call that times out may have run on the server.
  std::int64_t timeout_ns = -1;

  [[nodiscard]] bool is_command() const noexcept { return !command.empty(); }
  [[nodiscard]] bool uses(placeholder p) const noexcept;

  friend bool operator==(const protocol_call&, const protocol_call&) = default;
};

enum class renewal_loss : std::uint8_t {
  keep_working,    // finish the request under the lost lease (the default: what most clients do)
  stop_new_work,   // finish it, then take no new work until the client is restarted
  abort_request,   // give up the request at once (the downstream work may go on)
  crash_process,   // the process dies (an unhandled lost-lock error): its work is lost, it restarts later
};
inline constexpr const char* renewal_loss_names[] = {"keep_working", "stop_new_work", "abort_request", "crash_process"};

enum class timeout_permit : std::uint8_t {
  release,       // a client timeout releases the permit at once (the connection may still be open)
  hold_to_end,   // the permit is held until the downstream connection really ends
};
inline constexpr const char* timeout_permit_names[] = {"release", "hold_to_end"};

// What a client whose acquire gives up (acquire_timeout or unreachable) does
// before it reports so.
enum class give_up_action : std::uint8_t {
  stop,     // it stops polling (the default): whatever the server keeps of it stays until the server drops it
  release,  // it runs its release call once (best effort, not retried): a waiter leaves a server-side line
};
inline constexpr const char* give_up_action_names[] = {"stop", "release"};

// How many Redis nodes an acquisition runs on (the scenario's gate.redis_nodes).
enum class quorum_rule : std::uint8_t {
  single,    // one node (node 0 of the world)
  majority,  // every node, in order; the permit counts when a majority granted it within its validity
  all,       // every node, in order; the permit counts only when every node granted it within its validity
};
inline constexpr const char* quorum_rule_names[] = {"single", "majority", "all"};

struct retry_policy {
  bool exponential = false;
  std::int64_t delay_ns = 200'000'000;  // fixed
  std::int64_t base_ns = 50'000'000;    // exponential: first wait, doubled per attempt
  std::int64_t max_ns = 2'000'000'000;  // exponential: cap
  bool full_jitter = true;

  friend bool operator==(const retry_policy&, const retry_policy&) = default;
};

// A grant counts only once replicas hold it: after an acquire that granted,
// the client sends WAIT <replicas> <timeout_ms>; an answer below `replicas`
// (or an error, or a lost reply) makes it release the permit once and count
// the attempt as not granted.
struct acknowledge_policy {
  std::int64_t replicas = 1;     // >= 1
  std::int64_t timeout_ms = 50;  // > 0 (WAIT's 0 would block for ever)

  friend bool operator==(const acknowledge_policy&, const acknowledge_policy&) = default;
};

// Which clock the client measures its acquire deadline on.
enum class deadline_clock : std::uint8_t {
  monotonic,  // a monotonic clock: true time (the default)
  wall,       // the caller's wall clock, with its offset, drift and steps: a step forward ends the wait early
};
inline constexpr const char* deadline_clock_names[] = {"monotonic", "wall"};

// When a holder's next renewal is due.
enum class renew_timing : std::uint8_t {
  fixed_delay,  // renew_every after the previous renewal's answer (the default): slow answers push it later
  fixed_rate,   // every renew_every from the grant, whatever the answers (a late one goes at once, never two at once)
};
inline constexpr const char* renew_timing_names[] = {"fixed_delay", "fixed_rate"};

// What an acquire does after an attempt whose reply never came (the call
// timed out or its connection dropped: the script may have granted it).
enum class lost_call_action : std::uint8_t {
  retry,      // back off and try again under the same token (the default): a script that is not idempotent for a
              // token it already granted takes a second permit
  new_token,  // back off and try again under a new token: whatever the lost call granted stays until it expires
  give_up,    // stop at once, reported as Redis unreachable (after the give-up release when the policy has one)
};
inline constexpr const char* lost_call_action_names[] = {"retry", "new_token", "give_up"};

struct client_policy {
  std::optional<retry_policy> retry;                // unset: the scenario's (or the default) backoff
  std::optional<std::int64_t> acquire_timeout_ns;   // unset: the scenario's
  give_up_action on_give_up = give_up_action::stop;
  lost_call_action on_lost_acquire = lost_call_action::retry;
  std::optional<std::int64_t> renew_every_ns;       // a fixed interval ...
  std::optional<double> renew_every_lease_fraction; // ... or a fraction of the lease (0.8 = every 0.8 lease)
  renewal_loss on_renewal_lost = renewal_loss::keep_working;
  // crash_process: how long the dead process takes to come back (a supervisor's restart).
  std::int64_t restart_after_ns = 5'000'000'000;
  renew_timing renewal_timing = renew_timing::fixed_delay;
  deadline_clock deadline = deadline_clock::monotonic;
  timeout_permit on_client_timeout = timeout_permit::release;
  // A pub/sub channel a client waiting between acquire attempts listens on: a
  // message on it (a release script's PUBLISH) ends the wait, and the client
  // tries again at once. Unset: it waits out its backoff. With
  // `wake_sharded` it is a shard channel (SSUBSCRIBE, which only SPUBLISH
  // reaches), else a plain one (SUBSCRIBE, which only PUBLISH reaches).
  std::optional<arg_template> wake_on;
  bool wake_sharded = false;
  // Unset: a grant counts as soon as the primary's acquire answers it.
  std::optional<acknowledge_policy> acknowledge;
  quorum_rule quorum = quorum_rule::single;

  friend bool operator==(const client_policy&, const client_policy&) = default;
};

// What a built-in variant's client does when its acquire gives up: what the
// variant's protocol file (gate/redis/protocols/) says, so that the two run
// alike. Only `fair` keeps something of a waiter at the server (its place in
// line), which its release script removes.
[[nodiscard]] constexpr give_up_action variant_on_give_up(variant v) noexcept {
  return v == variant::fair ? give_up_action::release : give_up_action::stop;
}

// Where the permits live and what their scores mean.
enum class score_meaning : std::uint8_t { acquired_at, expires_at };
inline constexpr const char* score_meaning_names[] = {"acquired_at", "expires_at"};

// What kind of key holds the permits: a sorted set (member: a token, score:
// ms), or a hash (field: a token, value: ms as a number).
enum class holders_shape : std::uint8_t { sorted_set, hash };
inline constexpr const char* holders_shape_names[] = {"sorted_set", "hash"};

struct holders_rule {
  arg_template key;  // a sorted set or a hash (`shape`); usually {key}
  score_meaning scores = score_meaning::acquired_at;
  holders_shape shape = holders_shape::sorted_set;
  // A string key counting the permits a fresh caller could take (a permit
  // counter beside the holders), when the protocol keeps one: then the free
  // permits plus the holders (live, or expired and not yet reaped) must equal
  // the limit after every command (capacity_conserved).
  std::optional<arg_template> free;

  friend bool operator==(const holders_rule&, const holders_rule&) = default;
};

// Calls run once before the fleet starts (a "set permits" step that creates
// a permit counter), in order, and (with `again_after_restart`) again each
// time a node comes back from a restart or failover, as a client that sets
// up on reconnect does. Without it, a restart that wipes what the set-up
// made is a fault the team must see.
struct setup_policy {
  std::vector<protocol_call> calls;  // each a script call or a plain command; its rule says what counts as done
  bool again_after_restart = false;

  friend bool operator==(const setup_policy&, const setup_policy&) = default;
};

struct protocol {
  std::string name;
  std::string description;
  std::vector<protocol_script> scripts;
  setup_policy setup;
  protocol_call acquire;
  protocol_call release;
  std::optional<protocol_call> renew;
  client_policy client;
  holders_rule holders;

  [[nodiscard]] bool uses(placeholder p) const noexcept;
  [[nodiscard]] const protocol_call& call(script_op op) const;
  // Whether the acquire's grant is a permit id that later calls send as {permit}.
  [[nodiscard]] bool grants_permit_ids() const noexcept { return acquire.rule.rule == reply_rule::permit_id; }

  friend bool operator==(const protocol&, const protocol&) = default;
};

// The renew interval the policy gives for a lease, or nullopt when the
// protocol does not renew.
[[nodiscard]] std::optional<std::int64_t> renew_every_ns(const protocol& p, std::int64_t lease_ns);

}  // namespace admit::redis
