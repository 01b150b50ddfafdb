// write_safetensors refuses bad input before touching the disk, and a save
// that fails (read-only directory, full disk, missing directory, rename
// refused) reports it, keeps the previous file and leaves no temporary file.
#include <catch2/catch.hpp>
#include <csignal>
#include <functional>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint_files.hpp"
#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/util/str_cat.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::checkpoint;
using kiln::test::require_error;
using kiln::test::ScratchDir;

namespace {

// What a child process reports through its exit status.
enum ChildResult { kChildOk = 0, kChildSaved = 1, kChildWrongError = 2, kChildSetupFailed = 3 };

// Runs `body` in a forked child and returns its exit status, or -1 when it
// did not exit normally. The child leaves with _exit: nothing of the test
// (its scratch directory included) is destroyed twice.
int run_in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int result = kChildSetupFailed;
    try {
      result = body();
    } catch (...) {
    }
    ::_exit(result);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Saves, expecting a kiln::Error whose message contains `expected`.
int save_expecting(const std::string& path, const std::vector<TensorBytes>& tensors, const std::string& expected) {
  try {
    write_safetensors(path, tensors, {});
  } catch (const Error& e) {
    return e.status() == Status::io && std::string(e.what()).find(expected) != std::string::npos ? kChildOk
                                                                                                 : kChildWrongError;
  }
  return kChildSaved;
}

}  // namespace

TEST_CASE("a save replaces the previous file and leaves nothing else", "[checkpoint][writer]") {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  const int64_t first[2] = {1, 2}, second[3] = {3, 4, 5};
  write_safetensors(path, {{"x", DType::i64, Shape{2}, first}}, {});
  write_safetensors(path, {{"x", DType::i64, Shape{3}, second}}, {{"step", "2"}});
  CHECK(dir.names() == std::vector<std::string>{"model.safetensors"});
  SafetensorsReader reader(path);
  CHECK(reader.header().tensors.at(0).shape == Shape{3});
  int64_t read_back[3];
  reader.read(reader.header().tensors[0], read_back);
  CHECK(std::vector<int64_t>(read_back, read_back + 3) == std::vector<int64_t>{3, 4, 5});

  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == (0644 & ~mask));
}

TEST_CASE("a relative path saves into the working directory", "[checkpoint][writer]") {
  ScratchDir dir;
  char previous[4096];
  REQUIRE(::getcwd(previous, sizeof previous) != nullptr);
  REQUIRE(::chdir(dir.path().c_str()) == 0);
  const uint8_t byte = 7;
  write_safetensors("relative.safetensors", {{"b", DType::u8, Shape{}, &byte}}, {});
  REQUIRE(::chdir(previous) == 0);
  CHECK(dir.names() == std::vector<std::string>{"relative.safetensors"});
}

TEST_CASE("temporary files a killed writer left are neither reused nor removed", "[checkpoint][writer]") {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  // A child has a pid of its own, so the stale names can be made for it.
  // This process makes a few dozen saves at most, so the save counter the
  // child inherits is below kStale: its save meets stale names first.
  constexpr int kStale = 256;
  const int result = run_in_child([&] {
    for (int n = 0; n < kStale; ++n) {
      kiln::test::write_file(dir.file(str_cat(".model.safetensors.tmp.", int64_t(::getpid()), ".", n)), "stale");
    }
    const uint8_t byte = 9;
    write_safetensors(path, {{"b", DType::u8, Shape{}, &byte}}, {});
    return int(kChildOk);
  });
  CHECK(result == kChildOk);
  const std::vector<std::string> names = dir.names();
  CHECK(names.size() == kStale + 1);
  for (const std::string& name : names) {
    if (name != "model.safetensors") CHECK(kiln::test::read_file(dir.file(name)) == "stale");
  }
  CHECK(read_header(path).tensors.size() == 1);
}

TEST_CASE("saving into a read-only directory fails and leaves nothing", "[checkpoint][writer]") {
  ScratchDir dir;
  const std::string locked = dir.file("locked");
  const std::string path = locked + "/model.safetensors";
  REQUIRE(::mkdir(locked.c_str(), 0755) == 0);
  const uint8_t previous = 1;
  write_safetensors(path, {{"p", DType::u8, Shape{}, &previous}}, {});
  const std::string before = kiln::test::read_file(path);
  // The unprivileged child must be able to reach the directory.
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(locked.c_str(), 0555) == 0);

  const int result = run_in_child([&] {
    // Root ignores permissions: drop to an unprivileged user first.
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      return int(kChildSetupFailed);
    }
    const float values[4] = {1, 2, 3, 4};
    return save_expecting(path, {{"w", DType::f32, Shape{4}, values}},
                          str_cat("cannot save '", path, "': create temporary file: Permission denied"));
  });
  CHECK(result == kChildOk);
  CHECK(kiln::test::read_file(path) == before);
  REQUIRE(::chmod(locked.c_str(), 0755) == 0);
  CHECK(ScratchDir::names_in(locked) == std::vector<std::string>{"model.safetensors"});
}

TEST_CASE("saving onto a full disk fails, keeps the previous file and removes the temporary one",
          "[checkpoint][writer]") {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  const float previous[2] = {1, 2};
  write_safetensors(path, {{"w", DType::f32, Shape{2}, previous}}, {});
  const std::string before = kiln::test::read_file(path);

  // A file size limit makes write fail with EFBIG, as a full disk makes it
  // fail with ENOSPC: both go through the same path.
  const int result = run_in_child([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit = {4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return int(kChildSetupFailed);
    const std::vector<float> large(1 << 16, 3.0f);
    return save_expecting(path, {{"w", DType::f32, Shape{int64_t(large.size())}, large.data()}},
                          str_cat("cannot save '", path, "': write: File too large"));
  });
  CHECK(result == kChildOk);
  CHECK(kiln::test::read_file(path) == before);
  CHECK(dir.names() == std::vector<std::string>{"model.safetensors"});
}

TEST_CASE("saving into a directory that does not exist fails", "[checkpoint][writer]") {
  ScratchDir dir;
  const std::string path = dir.file("missing/model.safetensors");
  const uint8_t byte = 1;
  require_error(
      [&] {
        write_safetensors(path, {{"b", DType::u8, Shape{}, &byte}}, {});
      },
      Status::io, {str_cat("cannot save '", path, "': create temporary file: No such file or directory")});
  CHECK(dir.names().empty());
}

TEST_CASE("a rename that fails removes the temporary file", "[checkpoint][writer]") {
  ScratchDir dir;
  const std::string path = dir.file("taken");
  REQUIRE(::mkdir(path.c_str(), 0755) == 0);
  REQUIRE(::mkdir((path + "/inside").c_str(), 0755) == 0);
  const uint8_t byte = 1;
  require_error(
      [&] {
        write_safetensors(path, {{"b", DType::u8, Shape{}, &byte}}, {});
      },
      Status::io, {str_cat("cannot save '", path, "': rename: Is a directory")});
  CHECK(dir.names() == std::vector<std::string>{"taken"});
}

TEST_CASE("a path without a file name is refused", "[checkpoint][writer]") {
  ScratchDir dir;
  for (const std::string& path : {dir.path() + "/", dir.path() + "/.", std::string("..")}) {
    require_error([&] { write_safetensors(path, {}, {}); }, Status::invalid_argument,
                  {str_cat("cannot save '", path, "': the path does not end in a file name")});
  }
  CHECK(dir.names().empty());
}

TEST_CASE("tensors the format cannot hold are refused before anything is written", "[checkpoint][writer]") {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  const float values[2] = {1, 2};
  const auto refused = [&](const std::vector<TensorBytes>& tensors, const Metadata& metadata,
                           const std::string& reason) {
    require_error([&] { write_safetensors(path, tensors, metadata); }, Status::invalid_argument,
                  {str_cat("cannot save '", path, "': ", reason)});
  };
  refused(
      {{"a", DType::f32, Shape{2}, values}, {"b", DType::f32, Shape{2}, values}, {"a", DType::f32, Shape{1}, values}},
      {}, "tensor name 'a' appears twice");
  refused({{"a", DType::f32, Shape{2}, nullptr}}, {}, "tensor 'a' has no data");
  refused({{"__metadata__", DType::f32, Shape{2}, values}}, {}, "'__metadata__' is reserved and cannot name a tensor");
  refused({{"a", DType::f32, Shape{2, -1}, values}}, {}, "tensor 'a' has a negative dimension in shape [2, -1]");
  refused({{"a", DType::f64, Shape{int64_t(1) << 62, 8}, values}}, {},
          "tensor 'a' of shape [4611686018427387904, 8] is too large");
  refused({{"bad \xff name", DType::f32, Shape{2}, values}}, {}, "a tensor name is not valid UTF-8");
  refused({}, {{"k", "\xc0\xaf"}}, "a metadata entry is not valid UTF-8");
  refused({}, {{"k", "1"}, {"k", "2"}}, "metadata key 'k' appears twice");
  refused({}, {{std::string(kMaxHeaderBytes, 'k'), ""}},
          "the header would be 104857624 bytes, above the limit of 104857600");
  CHECK(dir.names().empty());
  // An empty tensor needs no data.
  write_safetensors(path, {{"empty", DType::f32, Shape{0, 3}, nullptr}}, {});
  CHECK(read_header(path).tensors.at(0).shape == Shape{0, 3});
}
