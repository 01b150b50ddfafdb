// kiln::Error, kiln::check and the version: what every failure of the
// wrapper carries.
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "support.hpp"

static_assert(std::is_base_of_v<std::runtime_error, kiln::Error>);

TEST_CASE("Error carries the status and the message of the failed call", "[error]") {
  const kiln::Error e(KILN_ERR_IO, "cannot read the file");
  CHECK(e.status() == KILN_ERR_IO);
  CHECK(std::string(e.status_name()) == kiln_status_name(KILN_ERR_IO));
  CHECK(std::string(e.what()) == "cannot read the file");
}

TEST_CASE("check throws for a failed status of a C call and passes KILN_OK", "[error]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  CHECK_NOTHROW(kiln::check(kiln_manual_seed(rt.get(), 3)));
  const kiln_op* op = nullptr;
  REQUIRE_KILN_ERROR(kiln::check(kiln_op_find(rt.get(), "reshap", &op)), KILN_ERR_NOT_FOUND, "reshap", "reshape");
  // The library's status and message, as kiln_last_error() has them.
  REQUIRE_KILN_ERROR(kiln::check(kiln_op_find(nullptr, "relu", &op)), KILN_ERR_INVALID_ARGUMENT, "'rt'");
}

TEST_CASE("version is the library's and the header's", "[error]") {
  CHECK(kiln::version() == kiln_version());
  CHECK(kiln::version() == std::to_string(KILN_VERSION_MAJOR) + "." + std::to_string(KILN_VERSION_MINOR) + "." +
                               std::to_string(KILN_VERSION_PATCH));
  const kiln_build_info info = kiln::build_info();
  CHECK(info.size == sizeof info);
  CHECK(std::strcmp(info.version, kiln_version()) == 0);
}
