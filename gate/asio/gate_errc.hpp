// Error codes with which the gates' asynchronous operations complete.
//
// queue_full (HTTP 429) and wait_timeout (HTTP 503) are the FIFO gate's
// refusals; acquire_timeout, unreachable and setup_not_done belong to the
// lease client.
// Cancellation is reported with Asio's own operation_aborted.
#pragma once

#include <boost/system/error_code.hpp>
#include <string>
#include <type_traits>

namespace admit::gate {

enum class gate_errc {
  queue_full = 1,       // the waiting queue had no room: refused at once
  wait_timeout,         // the wait deadline passed before a slot was free
  acquire_timeout,      // the lease client gave up polling
  unreachable,          // the coordination store could not be reached: fail closed
  setup_not_done,       // a protocol's set-up call answered, and its rule read the answer as not done
};

inline const char* to_status_string(gate_errc e) noexcept {
  switch (e) {
    case gate_errc::queue_full: return "queue_full";
    case gate_errc::wait_timeout: return "wait_timeout";
    case gate_errc::acquire_timeout: return "acquire_timeout";
    case gate_errc::unreachable: return "unreachable";
    case gate_errc::setup_not_done: return "setup_not_done";
  }
  return "unknown";
}

class gate_category_impl : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "admit.gate"; }
  std::string message(int ev) const override { return to_status_string(static_cast<gate_errc>(ev)); }
};

inline const boost::system::error_category& gate_category() noexcept {
  static const gate_category_impl instance;
  return instance;
}

inline boost::system::error_code make_error_code(gate_errc e) noexcept {
  return {static_cast<int>(e), gate_category()};
}

}  // namespace admit::gate

template <>
struct boost::system::is_error_code_enum<admit::gate::gate_errc> : std::true_type {};
