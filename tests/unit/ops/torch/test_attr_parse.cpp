// Attribute values stored in the fixtures read back by the schema's type;
// malformed text is refused with a message naming it.
#include <catch2/catch.hpp>

#include <cmath>

#include "ops/torch/attr_parse.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("fixture attribute text reads back as the schema's type", "[ops][torch]") {
  CHECK(std::get<int64_t>(parse_attr_value("-3", AttrType::integer)) == -3);
  CHECK(std::get<double>(parse_attr_value("1e-05", AttrType::real)) == 1e-5);
  CHECK(std::isinf(std::get<double>(parse_attr_value("-inf", AttrType::real))));
  CHECK(std::isnan(std::get<double>(parse_attr_value("nan", AttrType::real))));
  CHECK(std::get<double>(parse_attr_value("2", AttrType::real)) == 2.0);
  CHECK(std::get<bool>(parse_attr_value("true", AttrType::boolean)));
  CHECK(std::get<std::vector<int64_t>>(parse_attr_value("[0, -1]", AttrType::ints)) == std::vector<int64_t>{0, -1});
  CHECK(std::get<std::vector<int64_t>>(parse_attr_value("[]", AttrType::ints)).empty());
  CHECK(std::get<std::vector<double>>(parse_attr_value("[0.5, 2]", AttrType::reals)) == std::vector<double>{0.5, 2});
  CHECK(std::get<std::string>(parse_attr_value("\"mean\"", AttrType::string)) == "mean");
  CHECK(std::get<DType>(parse_attr_value("f64", AttrType::dtype)) == DType::f64);
}

TEST_CASE("malformed fixture attribute text is refused", "[ops][torch]") {
  const auto [text, type] = GENERATE(table<std::string, AttrType>({{"2.5", AttrType::integer},
                                                                   {"", AttrType::real},
                                                                   {"yes", AttrType::boolean},
                                                                   {"0, 1", AttrType::ints},
                                                                   {"[1, x]", AttrType::ints},
                                                                   {"mean", AttrType::string},
                                                                   {"float128", AttrType::dtype}}));
  require_error([&] { parse_attr_value(text, type); }, Status::invalid_argument, {"cannot read '" + text + "'"});
}

TEST_CASE("a fixture attribute the op does not have is refused", "[ops][torch]") {
  Runtime rt;
  require_error([&] { parse_attrs(rt.op("sum"), {{"dim", "[0]"}}); }, Status::invalid_argument,
                {"op 'sum' has no attribute 'dim'"});
}
