#include "train/rank_agreement.hpp"

#include <vector>

#include "kiln/error.hpp"
#include "train/api_call.hpp"

namespace kiln::train {

void check_ranks_agree(kiln_runtime* rt, std::string_view what, std::span<const RankValue> values) {
  kiln_process_group* raw = nullptr;
  check_call(kiln_process_group_default(rt, &raw), str_cat(what, ": reaching the other ranks"));
  std::unique_ptr<kiln_process_group, decltype(&kiln_process_group_release)> group(raw, kiln_process_group_release);
  int rank = 0, world = 1;
  check_call(kiln_process_group_rank(group.get(), &rank, &world), what);

  std::vector<int64_t> mine;
  for (const RankValue& v : values) mine.push_back(v.value);
  const int64_t n = int64_t(mine.size()), all_n = n * world;
  kiln_tensor *local = nullptr, *all = nullptr;
  check_call(kiln_tensor_from_data(rt, mine.data(), mine.size() * sizeof(int64_t), &n, 1, KILN_I64, &local), what);
  TensorRef local_ref = TensorRef::adopt(local);
  check_call(kiln_tensor_zeros(rt, &all_n, 1, KILN_I64, KILN_DEVICE_CPU, 0, &all), what);
  TensorRef all_ref = TensorRef::adopt(all);
  check_call(kiln_process_group_all_gather(group.get(), local, all, nullptr),
             str_cat(what, ": comparing the ranks' ", values.front().name));
  std::vector<int64_t> gathered(static_cast<size_t>(all_n));
  check_call(kiln_tensor_read(all, gathered.data(), gathered.size() * sizeof(int64_t)), what);
  for (int r = 1; r < world; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t theirs = gathered[size_t(r * n + i)], first = gathered[size_t(i)];
      KILN_CHECK(theirs == first, Status::invalid_state, what, ": the ranks disagree: rank ", r, " has ",
                 values[size_t(i)].name, " ", theirs, ", rank 0 has ", first,
                 " (every rank must run the same model and take the same steps)");
    }
  }
}

}  // namespace kiln::train
