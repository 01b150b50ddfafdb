#include "attrs.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "host.hpp"

namespace kiln_optim {
namespace {

[[noreturn]] void wrong_type(const kiln_attr& a, const char* expected) {
  fail(KILN_ERR_INVALID_ARGUMENT, std::string("entry '") + a.name + "' must be " + expected);
}

}  // namespace

std::string to_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string to_text(int64_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "%" PRId64, v);
  return text;
}

const kiln_attr& Attrs::find(const char* name) const {
  for (size_t i = 0; i < n_; ++i)
    if (std::strcmp(data_[i].name, name) == 0) return data_[i];
  fail(KILN_ERR_INTERNAL, std::string("the configuration has no entry '") + name + "'");
}

double Attrs::number(const char* name) const {
  const kiln_attr& a = find(name);
  if (a.type == KILN_ATTR_FLOAT) return a.value.f;
  if (a.type == KILN_ATTR_INT) return double(a.value.i);
  wrong_type(a, "a number");
}

int64_t Attrs::integer(const char* name) const {
  const kiln_attr& a = find(name);
  if (a.type != KILN_ATTR_INT) wrong_type(a, "an integer");
  return a.value.i;
}

bool Attrs::flag(const char* name) const {
  const kiln_attr& a = find(name);
  if (a.type != KILN_ATTR_BOOL) wrong_type(a, "a bool");
  return a.value.b != 0;
}

std::string Attrs::text(const char* name) const {
  const kiln_attr& a = find(name);
  if (a.type != KILN_ATTR_STRING) wrong_type(a, "a string");
  return a.value.s;
}

std::vector<double> Attrs::numbers(const char* name) const {
  const kiln_attr& a = find(name);
  if (a.type == KILN_ATTR_FLOATS)
    return std::vector<double>(a.value.floats.data, a.value.floats.data + a.value.floats.len);
  if (a.type == KILN_ATTR_INTS) return std::vector<double>(a.value.ints.data, a.value.ints.data + a.value.ints.len);
  wrong_type(a, "a list of numbers");
}

std::vector<int64_t> Attrs::integers(const char* name) const {
  const kiln_attr& a = find(name);
  if (a.type != KILN_ATTR_INTS) wrong_type(a, "a list of integers");
  return std::vector<int64_t>(a.value.ints.data, a.value.ints.data + a.value.ints.len);
}

void require_at_least(const char* name, double value, double min) {
  if (!(value >= min))
    fail(KILN_ERR_INVALID_ARGUMENT, std::string(name) + " must be >= " + to_text(min) + ", got " + to_text(value));
}

void require_above(const char* name, double value, double min) {
  if (!(value > min))
    fail(KILN_ERR_INVALID_ARGUMENT, std::string(name) + " must be > " + to_text(min) + ", got " + to_text(value));
}

void require_below(const char* name, double value, double max) {
  if (!(value < max))
    fail(KILN_ERR_INVALID_ARGUMENT, std::string(name) + " must be < " + to_text(max) + ", got " + to_text(value));
}

}  // namespace kiln_optim
