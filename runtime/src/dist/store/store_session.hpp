// One client connection of the store server: reads request frames, answers
// them from the shared table, parks GET and WAIT until their keys are set
// or their timeout ends, and notes a rank that leaves without BYE. Runs only
// on the server's thread.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "key_value_table.hpp"
#include "store_protocol.hpp"

namespace kiln::dist {

class StoreSession;

// What all connections of one server share.
struct StoreServerState {
  size_t max_message_bytes = 0;
  KeyValueTable table;
  std::vector<int> departed;  // in the order their connections closed
  std::unordered_set<std::shared_ptr<StoreSession>> sessions;
};

class StoreSession : public std::enable_shared_from_this<StoreSession> {
 public:
  StoreSession(boost::asio::ip::tcp::socket socket, StoreServerState& state);
  // Starts reading requests; the session keeps itself alive in
  // state.sessions until its connection ends.
  void start();
  // Ends the connection now. A rank that did not say BYE is recorded as
  // departed.
  void close();

 private:
  void read_length();
  void read_body(uint32_t length);
  void handle(std::string_view body);
  void answer(wire::Request& request);
  // GET (`is_get`) and WAIT: answers at once when every key is set, else
  // parks the request until they are or its timeout ends.
  void wait_for(std::vector<std::string> keys, uint64_t timeout_ms, bool is_get);
  // Answers the parked request: the value, ok, or timeout with the keys
  // still missing.
  void finish_wait();
  void reply(std::string frame);
  // A fatal reply, then the connection closes; nothing more is read.
  void fail(const std::string& message);
  void write_next();
  // After a fatal reply: FIN, then read and drop until the client closes,
  // then close.
  void drain_then_close();
  void discard_incoming(size_t discarded);

  StoreServerState& state_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer timer_;
  unsigned char length_[wire::kLengthBytes] = {};
  std::string body_;
  int rank_ = -1;
  bool said_bye_ = false;
  bool closed_ = false;

  // The parked GET or WAIT, if any. The serial tells a stale timer or
  // watch apart from the current one.
  bool waiting_ = false;
  bool waiting_get_ = false;
  uint64_t serial_ = 0;
  KeyValueTable::WatchId watch_ = 0;
  std::vector<std::string> waiting_keys_;

  std::deque<std::string> outbox_;
  bool writing_ = false;
  bool close_when_sent_ = false;
};

}  // namespace kiln::dist
