// A minimal blocking client for the agreement test: one connection to a real
// redis-server, commands sent as argv vectors (pipelined), replies turned into
// admit::redis::reply so they compare directly with the replica's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gate/redis/reply.hpp"

struct redisContext;

namespace admit::redis::test {

using command = std::vector<std::string>;

class redis_client {
 public:
  // Connects to host:port within one second; throws std::runtime_error with a
  // message naming the address and the cause if it cannot.
  redis_client(const std::string& host, int port);
  ~redis_client();
  redis_client(const redis_client&) = delete;
  redis_client& operator=(const redis_client&) = delete;

  // Sends every command in one write and reads every reply, in order.
  // Throws std::runtime_error on a connection error (not on error replies).
  std::vector<reply> pipeline(const std::vector<command>& commands);
  reply call(const command& c);

 private:
  struct context_deleter {
    void operator()(redisContext* c) const noexcept;
  };
  std::unique_ptr<redisContext, context_deleter> context_;
  std::string address_;
};

}  // namespace admit::redis::test
