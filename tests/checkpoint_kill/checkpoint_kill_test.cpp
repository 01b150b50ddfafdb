// A writer killed (SIGKILL) at a random moment never leaves a checkpoint
// that is not one complete save: a child saves version after version of a
// few-megabyte file to one path, the parent kills it after a random delay,
// then checks that the file at the path loads completely, every value equal
// to one version number no older than the last one seen, and that nothing
// but the file and temporary files (.<name>.tmp.*) exists. Temporary files
// a kill leaves behind must survive the next writer untouched (the writer
// removes only its own), then the test removes them.
//
// usage: kiln_checkpoint_kill_test [runs] [seed]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/error.hpp"

namespace fs = std::filesystem;
using namespace kiln;
using namespace kiln::checkpoint;

namespace {

constexpr const char* kName = "model.safetensors";
constexpr const char* kTemporaryPrefix = ".model.safetensors.tmp.";
// Versions of run r are r * kVersionsPerRun + 1, +2, ...: increasing across
// runs, and exact in f32 for every run count used here.
constexpr int64_t kVersionsPerRun = 10000;
constexpr int kMaxDelayMicroseconds = 60000;

// The tensors of one version: about 4 MB, three dtypes, all holding the version.
struct VersionedTensors {
  std::vector<float> weights = std::vector<float>(512 * 1024);
  std::vector<int64_t> counts = std::vector<int64_t>(128 * 1024);
  std::vector<uint8_t> bytes = std::vector<uint8_t>(1024 * 1024);

  void fill(int64_t version) {
    std::fill(weights.begin(), weights.end(), float(version));
    std::fill(counts.begin(), counts.end(), version);
    std::fill(bytes.begin(), bytes.end(), uint8_t(version & 0xff));
  }
  std::vector<TensorBytes> views() const {
    return {{"weights", DType::f32, Shape{int64_t(weights.size())}, weights.data()},
            {"counts", DType::i64, Shape{int64_t(counts.size())}, counts.data()},
            {"bytes", DType::u8, Shape{int64_t(bytes.size())}, bytes.data()}};
  }
};

[[noreturn]] void run_writer(const std::string& path, int run) {
  VersionedTensors tensors;
  try {
    for (int64_t k = 1; k < kVersionsPerRun; ++k) {
      const int64_t version = run * kVersionsPerRun + k;
      tensors.fill(version);
      write_safetensors(path, tensors.views(), {{"version", std::to_string(version)}});
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "writer: %s\n", e.what());
    ::_exit(2);
  }
  ::_exit(3);  // ran out of versions before the kill: the delays are too long
}

// Reads the whole checkpoint and returns its version; throws when any value
// disagrees.
int64_t loaded_version(const std::string& path) {
  SafetensorsReader reader(path);
  VersionedTensors read_back;
  const auto read = [&](const char* name, void* dst, size_t bytes) {
    const TensorEntry* entry = reader.find(name);
    if (!entry || entry->end - entry->begin != bytes)
      throw std::runtime_error(std::string("tensor ") + name + " is missing or resized");
    reader.read(*entry, dst);
  };
  read("weights", read_back.weights.data(), read_back.weights.size() * sizeof(float));
  read("counts", read_back.counts.data(), read_back.counts.size() * sizeof(int64_t));
  read("bytes", read_back.bytes.data(), read_back.bytes.size());
  const int64_t version = read_back.counts[0];
  VersionedTensors expected;
  expected.fill(version);
  if (read_back.weights != expected.weights || read_back.counts != expected.counts ||
      read_back.bytes != expected.bytes) {
    throw std::runtime_error("values of more than one version");
  }
  const Metadata want = {{"version", std::to_string(version)}};
  if (reader.header().metadata != want) throw std::runtime_error("metadata of another version");
  return version;
}

std::set<std::string> temporary_files(const fs::path& dir, std::vector<std::string>* others) {
  std::set<std::string> temporaries;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTemporaryPrefix, 0) == 0) {
      temporaries.insert(name);
    } else if (name != kName) {
      others->push_back(name);
    }
  }
  return temporaries;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 200;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  std::printf("seed %llu, %d runs, kill after 0 to %d ms\n", static_cast<unsigned long long>(seed), runs,
              kMaxDelayMicroseconds / 1000);
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> delay(0, kMaxDelayMicroseconds);

  std::string pattern = (fs::temp_directory_path() / "kiln-kill-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  const fs::path dir = pattern;
  const std::string path = (dir / kName).string();
  int64_t last_version = 0;
  int absent = 0, killed_mid_save = 0;
  std::set<std::string> left_by_previous_run;
  std::string failure;

  for (int run = 0; run < runs && failure.empty(); ++run) {
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child < 0) {
      failure = "fork failed";
      break;
    }
    if (child == 0) run_writer(path, run);
    const int delay_us = delay(random);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    const std::string at = "run " + std::to_string(run) + " (killed after " + std::to_string(delay_us) + " us): ";
    if (!WIFSIGNALED(status)) {
      failure = at + "the writer exited with status " + std::to_string(WEXITSTATUS(status)) + " before the kill";
      break;
    }

    std::vector<std::string> others;
    const std::set<std::string> temporaries = temporary_files(dir, &others);
    if (!others.empty()) {
      failure = at + "an unexpected file '" + others[0] + "'";
      break;
    }
    for (const std::string& old : left_by_previous_run) {
      if (!temporaries.count(old)) failure = at + "the writer removed '" + old + "', left by the previous run";
    }
    if (!fs::exists(path)) {
      if (last_version > 0) failure = at + "the checkpoint disappeared after version " + std::to_string(last_version);
      ++absent;
    } else {
      try {
        const int64_t version = loaded_version(path);
        if (version < last_version) {
          failure = at + "version " + std::to_string(version) + " is older than " + std::to_string(last_version);
        }
        last_version = version;
      } catch (const std::exception& e) {
        failure = at + "the checkpoint does not load: " + e.what();
      }
    }
    // The temporaries this run left (at most the one its kill interrupted).
    std::set<std::string> new_ones;
    for (const std::string& t : temporaries) {
      if (!left_by_previous_run.count(t)) new_ones.insert(t);
    }
    killed_mid_save += new_ones.empty() ? 0 : 1;
    for (const std::string& old : left_by_previous_run) fs::remove(dir / old);
    left_by_previous_run = new_ones;
  }
  fs::remove_all(dir);

  if (failure.empty() && killed_mid_save == 0) {
    failure = "no kill landed inside a save: the test proved nothing";
  }
  if (!failure.empty()) {
    std::fprintf(stderr, "FAILED: %s\n", failure.c_str());
    return 1;
  }
  std::printf("%d of the kills landed inside a save, %d before the first save finished; last version %lld\n",
              killed_mid_save, absent, static_cast<long long>(last_version));
  std::printf("%d kill runs, all checkpoints loadable\n", runs);
  return 0;
}
