#include "store_session.hpp"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <exception>

#include "kiln/error.hpp"

namespace kiln::dist {

namespace asio = boost::asio;
using boost::system::error_code;
using wire::FrameWriter;
using wire::Op;
using wire::ReplyStatus;

namespace {

// Longer waits are cut to this (a month): steady_timer's clock must not
// overflow on a client's 2^64 ms.
constexpr uint64_t kLongestWaitMs = uint64_t(30) * 24 * 3600 * 1000;

// What a connection that is being closed for a protocol error may still
// read and drop, and for how long.
constexpr size_t kDrainBytes = 64 * 1024;
constexpr std::chrono::milliseconds kDrainTime{500};

std::string ok_frame() { return FrameWriter(uint8_t(ReplyStatus::ok)).take(); }

std::string error_frame(ReplyStatus status, std::string_view message) {
  return FrameWriter(uint8_t(status)).str(message).take();
}

}  // namespace

StoreSession::StoreSession(asio::ip::tcp::socket socket, StoreServerState& state)
    : state_(state), socket_(std::move(socket)), timer_(socket_.get_executor()) {}

void StoreSession::start() {
  error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  read_length();
}

void StoreSession::close() {
  if (closed_) return;
  closed_ = true;
  if (waiting_) state_.table.unwatch(watch_);
  waiting_ = false;
  timer_.cancel();
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  if (!said_bye_ && rank_ >= 0) state_.departed.push_back(rank_);
  state_.sessions.erase(shared_from_this());
}

void StoreSession::read_length() {
  asio::async_read(socket_, asio::buffer(length_), [self = shared_from_this()](error_code ec, size_t) {
    if (self->closed_) return;
    if (ec) return self->close();  // the client closed, or its process ended
    const uint32_t length = wire::decode_length(self->length_);
    if (length == 0 || length > self->state_.max_message_bytes) {
      // Nothing of the body is read or allocated.
      return self->fail(str_cat("a message of ", length, " bytes: the server takes 1 to ",
                                self->state_.max_message_bytes, " bytes (max_message_bytes)"));
    }
    self->read_body(length);
  });
}

void StoreSession::read_body(uint32_t length) {
  body_.resize(length);
  asio::async_read(socket_, asio::buffer(body_), [self = shared_from_this()](error_code ec, size_t) {
    if (self->closed_) return;
    if (ec) return self->close();
    std::string body = std::move(self->body_);
    self->body_ = std::string();
    self->handle(body);
    if (!self->closed_ && !self->close_when_sent_) self->read_length();
  });
}

void StoreSession::handle(std::string_view body) {
  if (waiting_) {
    // The client sends one request at a time: a second one while a GET or
    // WAIT is parked means it lost track of the connection.
    return fail("a request arrived before the previous GET or WAIT was answered");
  }
  try {
    wire::Request request = wire::decode_request(body);
    answer(request);
  } catch (const Error& e) {
    // A request that does not parse: what follows it cannot be trusted.
    fail(e.what());
  } catch (const std::exception& e) {
    fail(str_cat("the server could not answer: ", e.what()));
  }
}

void StoreSession::answer(wire::Request& r) {
  StoreServerState& s = state_;
  switch (r.op) {
    case Op::hello:
      if (r.version != wire::kProtocolVersion) {
        return fail(str_cat("the client speaks store protocol version ", r.version, ", the server version ",
                            wire::kProtocolVersion));
      }
      rank_ = r.rank;
      return reply(FrameWriter(uint8_t(ReplyStatus::ok)).u64(s.max_message_bytes).take());
    case Op::bye:
      said_bye_ = true;
      close_when_sent_ = true;
      return reply(ok_frame());
    case Op::set:
      s.table.set(r.key, std::move(r.value));
      return reply(ok_frame());
    case Op::get: return wait_for({std::move(r.key)}, r.timeout_ms, true);
    case Op::wait: return wait_for(std::move(r.keys), r.timeout_ms, false);
    case Op::try_get: {
      FrameWriter w(uint8_t(ReplyStatus::ok));
      if (const std::string* value = s.table.find(r.key)) {
        w.u8(1).str(*value);
      } else {
        w.u8(0);
      }
      return reply(w.take());
    }
    case Op::add:
      try {
        const int64_t value = s.table.add(r.key, r.delta);
        return reply(FrameWriter(uint8_t(ReplyStatus::ok)).i64(value).take());
      } catch (const Error& e) {
        return reply(error_frame(ReplyStatus::error, e.what()));  // the connection goes on
      }
    case Op::compare_set: {
      const std::string value = s.table.compare_set(r.key, r.expected, std::move(r.value));
      return reply(FrameWriter(uint8_t(ReplyStatus::ok)).str(value).take());
    }
    case Op::remove:
      return reply(FrameWriter(uint8_t(ReplyStatus::ok)).u8(s.table.remove(r.key) ? 1 : 0).take());
    case Op::departed: {
      FrameWriter w(uint8_t(ReplyStatus::ok));
      w.u32(uint32_t(s.departed.size()));
      for (const int rank : s.departed) w.i32(rank);
      return reply(w.take());
    }
  }
}

void StoreSession::wait_for(std::vector<std::string> keys, uint64_t timeout_ms, bool is_get) {
  waiting_keys_ = std::move(keys);
  waiting_get_ = is_get;
  const uint64_t serial = ++serial_;
  if (state_.table.missing(waiting_keys_).empty()) return finish_wait();
  waiting_ = true;
  watch_ = state_.table.watch(waiting_keys_, [weak = weak_from_this(), serial] {
    const auto self = weak.lock();
    if (self && self->waiting_ && self->serial_ == serial) self->finish_wait();
  });
  // The server answers "timeout" itself, so the client never receives a
  // late value after it gave up and the connection stays in step.
  timer_.expires_after(std::chrono::milliseconds(std::min(timeout_ms, kLongestWaitMs)));
  timer_.async_wait([self = shared_from_this(), serial](error_code ec) {
    if (!ec && self->waiting_ && self->serial_ == serial) self->finish_wait();
  });
}

void StoreSession::finish_wait() {
  if (waiting_) {
    waiting_ = false;
    state_.table.unwatch(watch_);  // nothing when the watch fired
    timer_.cancel();
  }
  const std::vector<std::string> missing = state_.table.missing(waiting_keys_);
  if (!missing.empty()) {
    // The timeout ended it: a watch fires only once every key is set.
    FrameWriter w(uint8_t(ReplyStatus::timeout));
    w.u32(uint32_t(missing.size()));
    for (const std::string& key : missing) w.str(key);
    reply(w.take());
  } else if (waiting_get_) {
    reply(FrameWriter(uint8_t(ReplyStatus::ok)).str(*state_.table.find(waiting_keys_.front())).take());
  } else {
    reply(ok_frame());
  }
  waiting_keys_.clear();
}

void StoreSession::reply(std::string frame) {
  outbox_.push_back(std::move(frame));
  if (!writing_) write_next();
}

void StoreSession::fail(const std::string& message) {
  if (waiting_) state_.table.unwatch(watch_);
  waiting_ = false;
  timer_.cancel();
  close_when_sent_ = true;
  reply(error_frame(ReplyStatus::fatal, message));
}

void StoreSession::write_next() {
  if (closed_) return;
  if (outbox_.empty()) {
    if (close_when_sent_ && said_bye_) close();
    else if (close_when_sent_) drain_then_close();
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(outbox_.front()), [self = shared_from_this()](error_code ec, size_t) {
    self->writing_ = false;
    if (self->closed_) return;
    if (ec) return self->close();
    self->outbox_.pop_front();
    self->write_next();
  });
}

void StoreSession::drain_then_close() {
  // Closing a socket with unread bytes sends a reset, and the peer's
  // kernel may drop the error reply with it. So: send FIN after the reply,
  // read and drop what the client is still sending (a little, for a short
  // while), then close.
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  timer_.expires_after(kDrainTime);
  timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec) self->close();
  });
  discard_incoming(0);
}

void StoreSession::discard_incoming(size_t discarded) {
  body_.resize(4096);
  socket_.async_read_some(asio::buffer(body_), [self = shared_from_this(), discarded](error_code ec, size_t n) {
    if (self->closed_) return;
    if (ec || discarded + n > kDrainBytes) return self->close();
    self->discard_incoming(discarded + n);
  });
}

}  // namespace kiln::dist
