// TensorBoard event files: CRC-32C against its published check values, and
// files from EventFileWriter read back by an independent reader (framing,
// checksums, the protobuf fields), with the errors of a folder that cannot
// be made.
#include <catch2/catch.hpp>

#include <cstring>
#include <regex>
#include <string>

#include "checkpoint/checkpoint_files.hpp"
#include "kiln/error.hpp"
#include "kiln/tensorboard/event_file.hpp"
#include "kiln/util/crc32c.hpp"
#include "tensorboard/event_reader.hpp"

using namespace kiln;
using kiln::tensorboard::EventFileWriter;
using kiln::tensorboard::Scalar;

namespace {

uint32_t crc_of(const std::string& bytes) { return crc32c(bytes.data(), bytes.size()); }

}  // namespace

TEST_CASE("crc32c matches the standard check values", "[tensorboard]") {
  // The catalogue's check value, and the iSCSI test vectors of RFC 3720 (B.4).
  CHECK(crc_of("123456789") == 0xE3069283u);
  CHECK(crc_of(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(crc_of(std::string(32, '\xFF')) == 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending += char(i);
    descending += char(31 - i);
  }
  CHECK(crc_of(ascending) == 0x46DD794Eu);
  CHECK(crc_of(descending) == 0x113FDB5Cu);
  CHECK(crc_of("") == 0u);
}

TEST_CASE("crc32c continues across pieces", "[tensorboard]") {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  const uint32_t first = crc32c(text.data(), 10);
  CHECK(crc32c(text.data() + 10, text.size() - 10, first) == crc_of(text));
  CHECK(crc_of(text) == 0x22620404u);
}

TEST_CASE("masked crc32c rotates and offsets as TensorFlow's records do", "[tensorboard]") {
  const std::string text = "123456789";
  const uint32_t crc = 0xE3069283u;
  CHECK(masked_crc32c(text.data(), text.size()) == ((crc >> 15) | (crc << 17)) + 0xA282EAD8u);
}

TEST_CASE("an event file starts with the file version and holds each step's scalars", "[tensorboard]") {
  test::ScratchDir dir;
  std::string path;
  {
    EventFileWriter writer(dir.file("runs/exp1"));  // parents are made
    path = writer.path();
    const Scalar first[] = {{"train/loss", 2.5}, {"train/lr", 0.125}};
    writer.write_scalars(1, first);
    const Scalar second[] = {{"train/loss", -0.75}};
    writer.write_scalars(4000000000LL, second);
    const Scalar negative[] = {{"eval/accuracy", 0.875}};
    writer.write_scalars(-3, negative);
  }
  const std::string name = path.substr(path.rfind('/') + 1);
  CHECK(std::regex_match(name, std::regex(R"(events\.out\.tfevents\.\d{10}\..+\.\d+\.\d+)")));
  CHECK(path.rfind(dir.file("runs/exp1/"), 0) == 0);

  const std::vector<test::ReadEvent> events = test::read_event_file(path);
  REQUIRE(events.size() == 4);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[0].scalars.empty());
  CHECK(events[0].wall_time > 1.7e9);
  REQUIRE(events[1].scalars.size() == 2);
  CHECK(events[1].step == 1);
  CHECK(events[1].scalars[0].tag == "train/loss");
  CHECK(events[1].scalars[0].value == 2.5f);
  CHECK(events[1].scalars[1].tag == "train/lr");
  CHECK(events[1].scalars[1].value == 0.125f);
  CHECK(events[1].wall_time >= events[0].wall_time);
  CHECK(events[2].step == 4000000000LL);
  CHECK(events[2].scalars.at(0).value == -0.75f);
  CHECK(events[3].step == -3);
  CHECK(events[3].scalars.at(0).tag == "eval/accuracy");
}

TEST_CASE("each event is on disk once write_scalars returns", "[tensorboard]") {
  test::ScratchDir dir;
  EventFileWriter writer(dir.path());
  const Scalar loss[] = {{"train/loss", 1.0}};
  writer.write_scalars(7, loss);
  const std::vector<test::ReadEvent> events = test::read_event_file(writer.path());
  REQUIRE(events.size() == 2);
  CHECK(events[1].step == 7);
}

TEST_CASE("two writers of one folder make two files", "[tensorboard]") {
  test::ScratchDir dir;
  EventFileWriter a(dir.path());
  EventFileWriter b(dir.path());
  CHECK(a.path() != b.path());
  CHECK(dir.names().size() == 2);
}

TEST_CASE("the reader refuses a damaged record", "[tensorboard]") {
  test::ScratchDir dir;
  std::string path;
  {
    EventFileWriter writer(dir.path());
    path = writer.path();
  }
  std::string bytes = test::read_file(path);
  bytes[14] = char(bytes[14] ^ 0x01);  // inside the first payload
  CHECK_THROWS_WITH(test::read_events(bytes), Catch::Contains("payload's checksum does not match"));
  CHECK_THROWS_WITH(test::read_events(test::read_file(path).substr(0, 20)), Catch::Contains("runs past the file"));
}

TEST_CASE("a folder that cannot be made is an error naming it", "[tensorboard]") {
  test::ScratchDir dir;
  test::write_file(dir.file("plain"), "not a folder");
  const std::string folder = dir.file("plain/runs");
  try {
    EventFileWriter writer(folder);
    FAIL("a folder under a file was accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::io);
    CHECK_THAT(e.what(), Catch::Contains("cannot create the TensorBoard folder '" + folder + "'"));
  }
  CHECK_THROWS_WITH(EventFileWriter(""), Catch::Contains("the TensorBoard folder is empty"));
}
