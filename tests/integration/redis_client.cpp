#include "tests/integration/redis_client.hpp"

#include <hiredis/hiredis.h>

#include <stdexcept>

namespace admit::redis::test {
namespace {

reply convert(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
      return reply::bulk(std::string(r->str, r->len));
    case REDIS_REPLY_ARRAY: {
      std::vector<reply> elements;
      elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) elements.push_back(convert(r->element[i]));
      return reply::array(std::move(elements));
    }
    case REDIS_REPLY_INTEGER:
      return reply::from_integer(r->integer);
    case REDIS_REPLY_NIL:
      return reply::nil();
    case REDIS_REPLY_STATUS:
      return reply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR:
      return reply::error(std::string(r->str, r->len));
    default:
      throw std::runtime_error("unexpected hiredis reply type " + std::to_string(r->type));
  }
}

}  // namespace

void redis_client::context_deleter::operator()(redisContext* c) const noexcept { redisFree(c); }

redis_client::redis_client(const std::string& host, int port)
    : address_(host + ":" + std::to_string(port)) {
  const timeval timeout{1, 0};
  context_.reset(redisConnectWithTimeout(host.c_str(), port, timeout));
  if (!context_) throw std::runtime_error("cannot allocate a connection to " + address_);
  if (context_->err != 0) {
    throw std::runtime_error("cannot connect to redis-server at " + address_ + ": " +
                             context_->errstr);
  }
  const timeval io_timeout{10, 0};
  redisSetTimeout(context_.get(), io_timeout);
}

redis_client::~redis_client() = default;

std::vector<reply> redis_client::pipeline(const std::vector<command>& commands) {
  for (const command& c : commands) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const std::string& arg : c) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    if (redisAppendCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      throw std::runtime_error("cannot queue a command for " + address_ + ": " + context_->errstr);
    }
  }
  std::vector<reply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) {
      throw std::runtime_error("connection to " + address_ + " failed: " + context_->errstr);
    }
    const std::unique_ptr<redisReply, void (*)(void*)> owned(static_cast<redisReply*>(raw),
                                                              freeReplyObject);
    replies.push_back(convert(owned.get()));
  }
  return replies;
}

reply redis_client::call(const command& c) { return pipeline({c}).front(); }

}  // namespace admit::redis::test
