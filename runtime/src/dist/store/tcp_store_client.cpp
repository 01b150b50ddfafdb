// The store client: connects with back-off, introduces itself, and turns
// each Store call into one request and one reply on its connection.
#include <algorithm>
#include <boost/asio/error.hpp>
#include <cstdint>
#include <mutex>
#include <thread>

#include "kiln/dist/store.hpp"
#include "kiln/error.hpp"
#include "store_connection.hpp"
#include "store_protocol.hpp"

namespace kiln::dist {

namespace asio = boost::asio;
using boost::system::error_code;
using Clock = StoreConnection::Clock;
using wire::FrameReader;
using wire::Op;
using wire::ReplyStatus;
using wire::Request;

namespace {

// How long past its own timeout the client waits for a reply: the server
// answers "timeout" itself when a wait ends, so only a server that hangs or
// is gone keeps the client waiting that long.
constexpr Milliseconds kReplyMargin{2000};
// The longest wait on goodbye in the destructor.
constexpr Milliseconds kByeWait{1000};
constexpr Milliseconds kFirstBackoff{10};
constexpr Milliseconds kLongestBackoff{1000};
// The reply to HELLO is a few bytes: more means another service answered.
constexpr size_t kLargestHelloReply = 64 * 1024;

uint64_t wire_timeout(Milliseconds t) { return uint64_t(std::max<int64_t>(t.count(), 0)); }

// "connection refused", to sit inside a sentence.
std::string describe(error_code ec) {
  std::string text = ec == asio::error::timed_out ? std::string("no answer") : ec.message();
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') text[0] = char(text[0] - 'A' + 'a');
  return text;
}

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) out += str_cat(out.empty() ? "" : ", ", wire::quoted(key));
  return out;
}

}  // namespace

struct TcpStore::Impl {
  struct Reply {
    ReplyStatus status;
    std::string fields;  // after the status byte
  };

  Impl(const Options& options) : connection(options.host, options.port), rank(options.rank) {}
  void connect(Milliseconds timeout);
  // Sends `request` and returns its reply, ok or timeout. Throws for an
  // error reply, a fatal one (the connection is lost then), a connection
  // that closed, and no reply by `timeout` plus the margin.
  Reply call(const Request& request, const std::string& what, Milliseconds timeout);
  [[noreturn]] void lose(error_code ec, const std::string& what, Milliseconds waited);

  std::mutex mutex;
  StoreConnection connection;
  int rank;
  uint64_t server_max_message_bytes = 0;  // from the reply to HELLO
  std::string lost;  // why the connection cannot be used any more; empty while it can
};

void TcpStore::Impl::connect(Milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  Milliseconds backoff = kFirstBackoff;
  std::string last_error;
  for (;;) {
    const error_code ec = connection.connect(deadline);
    if (!ec) break;
    // An attempt cut off by the deadline says less than the one before it.
    if (ec != asio::error::timed_out || last_error.empty()) {
      last_error = describe(ec);
    }
    const Clock::time_point now = Clock::now();
    KILN_CHECK(now < deadline, Status::timeout, "store at ", connection.address(), ": could not connect within ",
               timeout.count(), " ms (last error: ", last_error, ")");
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, kLongestBackoff);
  }
  Request hello{.op = Op::hello, .rank = rank};
  const std::string frame = wire::encode_request(hello);
  std::string body;
  error_code ec = connection.write(frame, deadline + kReplyMargin);
  if (!ec) ec = connection.read_frame(body, kLargestHelloReply, deadline + kReplyMargin);
  if (ec == asio::error::message_size) {
    throw_error(Status::peer, str_cat("store at ", connection.address(),
                                      ": the service there does not speak the store protocol"));
  }
  if (ec) lose(ec, "store connect", timeout + kReplyMargin);
  FrameReader reply(body);
  const auto status = ReplyStatus(reply.u8("status"));
  if (status != ReplyStatus::ok) {
    throw_error(Status::unsupported, str_cat("store at ", connection.address(), ": the server refused this client: ",
                                             reply.str("message")));
  }
  server_max_message_bytes = reply.u64("max_message_bytes");
}

[[noreturn]] void TcpStore::Impl::lose(error_code ec, const std::string& what, Milliseconds waited) {
  connection.close();
  if (ec == asio::error::timed_out) {
    lost = str_cat("no reply within ", waited.count(), " ms");
    throw_error(Status::timeout, str_cat(what, ": no reply from the store at ", connection.address(), " within ",
                                         waited.count(), " ms (the server may hang); the connection is closed"));
  }
  if (ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
      ec == asio::error::connection_aborted) {
    lost = "the connection closed";
    throw_error(Status::peer, str_cat("store at ", connection.address(),
                                      ": the connection closed (the server's process may have ended)"));
  }
  lost = ec == asio::error::message_size ? std::string("the server sent a malformed reply") : describe(ec);
  throw_error(Status::peer, str_cat("store at ", connection.address(), ": ", lost));
}

TcpStore::Impl::Reply TcpStore::Impl::call(const Request& request, const std::string& what, Milliseconds timeout) {
  const std::string frame = wire::encode_request(request);
  std::lock_guard lock(mutex);
  KILN_CHECK(lost.empty(), Status::peer, what, ": the connection to the store at ", connection.address(),
             " was lost earlier (", lost, ")");
  const size_t body_bytes = frame.size() - wire::kLengthBytes;
  KILN_CHECK(body_bytes <= server_max_message_bytes, Status::invalid_argument, what, ": the request of ", body_bytes,
             " bytes is larger than the store server takes (", server_max_message_bytes,
             " bytes, TcpStoreServer::Options::max_message_bytes)");
  const Milliseconds waited = std::max(timeout, Milliseconds(0)) + kReplyMargin;
  const Clock::time_point deadline = Clock::now() + waited;
  std::string body;
  error_code ec = connection.write(frame, deadline);
  if (!ec) ec = connection.read_frame(body, SIZE_MAX, deadline);
  if (ec) lose(ec, what, waited);
  const auto status = ReplyStatus(uint8_t(body[0]));
  const bool waits = request.op == Op::get || request.op == Op::wait;
  if (uint8_t(status) > uint8_t(ReplyStatus::fatal) || (status == ReplyStatus::timeout && !waits)) {
    lose(asio::error::message_size, what, waited);
  }
  body.erase(0, 1);
  if (status == ReplyStatus::ok || status == ReplyStatus::timeout) return Reply{status, std::move(body)};
  const std::string message = FrameReader(body).str("message");
  if (status == ReplyStatus::error) throw_error(Status::invalid_argument, str_cat(what, ": ", message));
  connection.close();
  lost = str_cat("the server closed it: ", message);
  throw_error(Status::internal, str_cat(what, ": the store server refused the request and closed the connection: ",
                                        message));
}

// ---- the Store calls ------------------------------------------------------------

TcpStore::TcpStore(const Options& options) : Store(options.timeout), impl_(std::make_unique<Impl>(options)) {
  impl_->connect(options.timeout);
}

TcpStore::~TcpStore() {
  std::lock_guard lock(impl_->mutex);
  if (impl_->lost.empty()) {
    // Goodbye, so that the server does not count this rank as departed.
    // Waiting for its answer means the server has taken note by the time
    // the destructor returns.
    const Clock::time_point deadline = Clock::now() + kByeWait;
    std::string body;
    if (!impl_->connection.write(wire::encode_request(Request{.op = Op::bye}), deadline)) {
      (void)impl_->connection.read_frame(body, kLargestHelloReply, deadline);
    }
  }
  impl_->connection.close();
}

void TcpStore::set(const std::string& key, const std::string& value) {
  impl_->call({.op = Op::set, .key = key, .value = value}, str_cat("store set ", wire::quoted(key)), timeout());
}

std::string TcpStore::get(const std::string& key) {
  const Milliseconds t = timeout();
  const std::string what = str_cat("store get ", wire::quoted(key));
  const Impl::Reply reply = impl_->call({.op = Op::get, .key = key, .timeout_ms = wire_timeout(t)}, what, t);
  KILN_CHECK(reply.status == ReplyStatus::ok, Status::timeout, what, ": timed out after ", t.count(),
             " ms waiting for the key");
  FrameReader fields(reply.fields);
  std::string value = fields.str("value");
  fields.expect_end("GET reply");
  return value;
}

std::optional<std::string> TcpStore::try_get(const std::string& key) {
  const Impl::Reply reply =
      impl_->call({.op = Op::try_get, .key = key}, str_cat("store try_get ", wire::quoted(key)), timeout());
  FrameReader fields(reply.fields);
  if (fields.u8("found") == 0) return std::nullopt;
  return fields.str("value");
}

void TcpStore::wait(std::span<const std::string> keys, Milliseconds timeout) {
  if (keys.empty()) return;
  const std::string what = keys.size() == 1 ? str_cat("store wait ", wire::quoted(keys[0])) : "store wait";
  const Impl::Reply reply = impl_->call(
      {.op = Op::wait, .keys = {keys.begin(), keys.end()}, .timeout_ms = wire_timeout(timeout)}, what, timeout);
  if (reply.status == ReplyStatus::ok) return;
  FrameReader fields(reply.fields);
  std::vector<std::string> missing(std::min<size_t>(fields.u32("key count"), keys.size()));
  for (std::string& key : missing) key = fields.str("key");
  throw_error(Status::timeout, str_cat(what, ": timed out after ", timeout.count(), " ms waiting for ", missing.size(),
                                       " of ", keys.size(), keys.size() == 1 ? " key: " : " keys: ",
                                       quoted_list(missing)));
}

int64_t TcpStore::add(const std::string& key, int64_t delta) {
  const Impl::Reply reply =
      impl_->call({.op = Op::add, .key = key, .delta = delta}, str_cat("store add ", wire::quoted(key)), timeout());
  return FrameReader(reply.fields).i64("value");
}

std::string TcpStore::compare_set(const std::string& key, const std::string& expected, const std::string& desired) {
  const Impl::Reply reply = impl_->call({.op = Op::compare_set, .key = key, .value = desired, .expected = expected},
                                        str_cat("store compare_set ", wire::quoted(key)), timeout());
  return FrameReader(reply.fields).str("value");
}

bool TcpStore::remove(const std::string& key) {
  const Impl::Reply reply =
      impl_->call({.op = Op::remove, .key = key}, str_cat("store remove ", wire::quoted(key)), timeout());
  return FrameReader(reply.fields).u8("deleted") != 0;
}

std::vector<int> TcpStore::departed_ranks() {
  const Impl::Reply reply = impl_->call({.op = Op::departed}, "store departed_ranks", timeout());
  FrameReader fields(reply.fields);
  const uint32_t n = fields.u32("rank count");
  std::vector<int> ranks;
  ranks.reserve(std::min<size_t>(n, fields.left() / 4));
  for (uint32_t i = 0; i < n; ++i) ranks.push_back(fields.i32("rank"));
  return ranks;
}

}  // namespace kiln::dist
