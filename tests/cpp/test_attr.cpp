// kiln::Attr and kiln::AttrList: C++ values become the kiln_attr of their
// type, and configurations read as braced lists of name/value pairs.
#include <cstring>
#include <type_traits>
#include <vector>

#include "support.hpp"

static_assert(!std::is_copy_constructible_v<kiln::AttrList> && !std::is_move_constructible_v<kiln::AttrList>);

namespace {
std::vector<int64_t> ints_of(const kiln_attr& a) { return {a.value.ints.data, a.value.ints.data + a.value.ints.len}; }
std::vector<double> floats_of(const kiln_attr& a) {
  return {a.value.floats.data, a.value.floats.data + a.value.floats.len};
}
}  // namespace

TEST_CASE("Attr takes the type of its value", "[attr]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const kiln::Tensor t = kiln::Tensor::zeros(rt, {1});
  const kiln::AttrList list = {{"int", 3},
                               {"size", size_t{4}},
                               {"float", 0.5},
                               {"single", 0.25f},
                               {"bool", true},
                               {"ints", {3, 5}},
                               {"floats", {0.9, 0.999}},
                               {"int_vector", std::vector<int64_t>{1, 2, 3}},
                               {"float_vector", std::vector<double>{1.5}},
                               {"text", "mean"},
                               {"string", std::string("sum")},
                               {"dtype", KILN_U8},
                               {"tensor", t}};
  REQUIRE(list.size() == 13);
  const kiln_attr* a = list.data();
  CHECK((std::strcmp(a[0].name, "int") == 0 && a[0].type == KILN_ATTR_INT && a[0].value.i == 3));
  CHECK((a[1].type == KILN_ATTR_INT && a[1].value.i == 4));
  CHECK((a[2].type == KILN_ATTR_FLOAT && a[2].value.f == 0.5));
  CHECK((a[3].type == KILN_ATTR_FLOAT && a[3].value.f == 0.25));
  CHECK((a[4].type == KILN_ATTR_BOOL && a[4].value.b == 1));
  CHECK((a[5].type == KILN_ATTR_INTS && ints_of(a[5]) == std::vector<int64_t>{3, 5}));
  CHECK((a[6].type == KILN_ATTR_FLOATS && floats_of(a[6]) == std::vector<double>{0.9, 0.999}));
  CHECK((a[7].type == KILN_ATTR_INTS && ints_of(a[7]) == std::vector<int64_t>{1, 2, 3}));
  CHECK((a[8].type == KILN_ATTR_FLOATS && floats_of(a[8]) == std::vector<double>{1.5}));
  CHECK((a[9].type == KILN_ATTR_STRING && std::strcmp(a[9].value.s, "mean") == 0));
  CHECK((a[10].type == KILN_ATTR_STRING && std::strcmp(a[10].value.s, "sum") == 0));
  CHECK((a[11].type == KILN_ATTR_DTYPE && a[11].value.dtype == KILN_U8));
  CHECK((a[12].type == KILN_ATTR_TENSOR && a[12].value.tensor == t.get()));
  CHECK(kiln::AttrList().size() == 0);
}

TEST_CASE("AttrList keeps copies: built from a vector that is gone", "[attr]") {
  std::vector<kiln::Attr> attrs{{"kernel_size", {3, 3}}, {"name", std::string(40, 'x')}};
  const kiln::AttrList list(attrs);
  attrs.clear();
  REQUIRE(list.size() == 2);
  CHECK(ints_of(list.data()[0]) == std::vector<int64_t>{3, 3});
  CHECK(std::string(list.data()[1].value.s) == std::string(40, 'x'));
}

TEST_CASE("Configurations reach layers, optimizers and sources", "[attr]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Module conv(
      rt, "Conv2d",
      {{"in_channels", 1}, {"out_channels", 4}, {"kernel_size", {3, 3}}, {"padding", 1}, {"bias", false}});
  REQUIRE(conv.named_parameters().size() == 1);
  CHECK(conv.parameters()[0].shape() == kiln::Shape{4, 1, 3, 3});
  kiln::DataSource bytes(rt, "synthetic", {{"length", 5}, {"shape", {2, 2}}, {"num_classes", 3}, {"dtype", KILN_U8}});
  CHECK(bytes.at(0).field("input").dtype() == KILN_U8);
  kiln::Optimizer adam(rt, "Adam", conv.parameters(), {{"lr", 0.01}, {"betas", {0.8, 0.9}}});
  CHECK(adam.hyper(0, "lr") == 0.01);
  REQUIRE_KILN_ERROR(kiln::Optimizer(rt, "Adam", conv.parameters(), {{"betas", {0.9}}}), KILN_ERR_INVALID_ARGUMENT,
                     "betas must hold 2 numbers");
  REQUIRE_KILN_ERROR(kiln::Module(rt, "Linear", {{"in_features", 2}, {"out_feature", 2}}), KILN_ERR_INVALID_ARGUMENT,
                     "out_feature");
  REQUIRE_KILN_ERROR(kiln::Module(rt, "Linear", {{"in_features", "two"}, {"out_features", 2}}),
                     KILN_ERR_INVALID_ARGUMENT, "in_features");
}
