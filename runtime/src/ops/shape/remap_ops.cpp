// flip, roll, repeat, pad, tril and triu: their attributes turned into a
// Remap (remap.hpp), their CPU kernels, and their backward. flip, roll,
// tril and triu are their own backward (roll with the shifts negated);
// repeat and pad add the gradient back through the map (repeat_backward,
// pad_backward), where several outputs may come from one input element.
#include <algorithm>
#include <string_view>

#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/helpers.hpp"
#include "remap.hpp"

namespace kiln::shape {
namespace {

std::vector<int64_t> dims_of(const Shape& s) { return {s.begin(), s.end()}; }

// The forward op a backward op belongs to: "pad" for "pad_backward".
std::string_view forward_name(const OpDef& op) {
  std::string_view name = op.name;
  constexpr std::string_view suffix = "_backward";
  if (name.ends_with(suffix)) name.remove_suffix(suffix.size());
  return name;
}

// Every dim kept, output shaped like the input.
Remap identity_map(const Shape& in) {
  Remap m;
  m.rank = in.rank();
  const Shape strides = contiguous_strides(in);
  for (int d = 0; d < in.rank(); ++d) {
    m.out_sizes[d] = in[d];
    m.in_strides[d] = strides[d];
    m.dims[d].size = in[d];
  }
  return m;
}

Remap flip_map(const OpDef& op, const Attrs& attrs, const Shape& in) {
  Remap m = identity_map(in);
  for (int64_t given : op.attr_ints(attrs, "dims")) {
    const int d = normalize_dim(int(given), in.rank(), op.name.c_str());
    KILN_CHECK(m.dims[d].rule == DimRule::keep, Status::invalid_argument, "op '", op.name, "': dimension ", given,
               " is listed twice in dims");
    m.dims[d].rule = DimRule::flip;
  }
  return m;
}

Remap roll_map(const OpDef& op, const Attrs& attrs, const Shape& in) {
  const std::vector<int64_t>& shifts = op.attr_ints(attrs, "shifts");
  const std::vector<int64_t>& dims = op.attr_ints(attrs, "dims");
  if (dims.empty()) {
    // No dims: the tensor rolls as if flattened, then takes its shape back.
    KILN_CHECK(shifts.size() == 1, Status::invalid_argument, "op '", op.name,
               "': without dims, shifts must hold one shift (the flattened tensor's), got ", shifts.size());
    const Shape flat{in.numel()};
    Remap m = identity_map(flat);
    m.dims[0] = {DimRule::wrap, flat[0], shifts[0]};
    return m;
  }
  KILN_CHECK(shifts.size() == dims.size(), Status::invalid_argument, "op '", op.name, "': ", shifts.size(),
             " shifts for ", dims.size(), " dims; give one shift per dim");
  Remap m = identity_map(in);
  for (size_t k = 0; k < dims.size(); ++k) {
    // A dim listed twice rolls by the sum, as rolling twice would.
    DimMap& dm = m.dims[normalize_dim(int(dims[k]), in.rank(), op.name.c_str())];
    dm.rule = DimRule::wrap;
    dm.shift += shifts[k];
  }
  return m;
}

Remap repeat_map(const OpDef& op, const Attrs& attrs, const Shape& in) {
  const std::vector<int64_t>& repeats = op.attr_ints(attrs, "repeats");
  KILN_CHECK(repeats.size() >= size_t(in.rank()), Status::invalid_argument, "op '", op.name, "': ", repeats.size(),
             " repeats for a tensor of rank ", in.rank(), "; give at least one per dim");
  KILN_CHECK(repeats.size() <= size_t(kMaxDims), Status::invalid_argument, "op '", op.name, "': ", repeats.size(),
             " repeats make more than ", kMaxDims, " dims");
  // The input reads as if it had leading size-1 dims, one per extra repeat.
  const int lead = int(repeats.size()) - in.rank();
  Remap m;
  m.rank = int(repeats.size());
  const Shape strides = contiguous_strides(in);
  for (int d = 0; d < m.rank; ++d) {
    KILN_CHECK(repeats[size_t(d)] >= 0, Status::invalid_argument, "op '", op.name, "': repeat ", repeats[size_t(d)],
               " for dim ", d, " is negative");
    const int64_t size = d < lead ? 1 : in[d - lead];
    m.out_sizes[d] = size * repeats[size_t(d)];
    m.in_strides[d] = d < lead ? 0 : strides[d - lead];
    m.dims[d] = {DimRule::wrap, size, 0};
  }
  return m;
}

DimRule pad_rule(const OpDef& op, const std::string& mode) {
  if (mode == "constant") return DimRule::fill_outside;
  if (mode == "reflect") return DimRule::reflect;
  if (mode == "replicate") return DimRule::replicate;
  throw_error(Status::invalid_argument,
              str_cat("op '", op.name, "': unknown mode '", mode, "' (expected constant, reflect or replicate)"));
}

// pad lists (before, after) pairs from the last dim backwards, as
// torch.nn.functional.pad: {1, 2} pads the last dim, {1, 2, 3, 4} the last
// two. Negative amounts crop (constant mode only).
Remap pad_map(const OpDef& op, const Attrs& attrs, const Shape& in) {
  const std::vector<int64_t>& pad = op.attr_ints(attrs, "pad");
  const std::string& mode = op.attr_string(attrs, "mode");
  const DimRule rule = pad_rule(op, mode);
  KILN_CHECK(pad.size() % 2 == 0 && pad.size() <= 2 * size_t(in.rank()), Status::invalid_argument, "op '", op.name,
             "': pad holds ", pad.size(), " values for a tensor of rank ", in.rank(),
             "; expected (before, after) pairs, at most one per dim");
  Remap m = identity_map(in);
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const int d = in.rank() - 1 - int(k);
    const int64_t before = pad[2 * k], after = pad[2 * k + 1], size = in[d];
    KILN_CHECK(rule == DimRule::fill_outside || (before >= 0 && after >= 0), Status::invalid_argument, "op '",
               op.name, "': negative padding (", before, ", ", after, ") of dimension ", d,
               " needs mode 'constant', not '", mode, "'");
    KILN_CHECK(size + before + after >= 0, Status::invalid_argument, "op '", op.name, "': padding (", before, ", ",
               after, ") leaves dimension ", d, " of size ", size, " with a negative size");
    KILN_CHECK(rule != DimRule::reflect || (before < size && after < size), Status::invalid_argument, "op '",
               op.name, "': reflect padding (", before, ", ", after, ") of dimension ", d,
               " must be less than its size ", size);
    KILN_CHECK(rule != DimRule::replicate || size > 0 || (before == 0 && after == 0), Status::invalid_argument,
               "op '", op.name, "': replicate padding of dimension ", d, " needs at least one element there");
    m.out_sizes[d] = size + before + after;
    m.dims[d] = {rule, size, before};
  }
  return m;
}

Remap triangle_map(const OpDef& op, const Attrs& attrs, const Shape& in, Triangle triangle) {
  KILN_CHECK(in.rank() >= 2, Status::invalid_argument, "op '", op.name,
             "': needs a matrix or a batch of matrices (rank 2 or more), got shape ", to_string(in));
  Remap m = identity_map(in);
  m.triangle = triangle;
  m.diagonal = op.attr_int(attrs, "diagonal");
  return m;
}

// ---- kernels --------------------------------------------------------------------

void remap_infer(InferCall& c) {
  const Shape& in = c.inputs[0].shape();
  c.outputs.push_back({remap_output_shape(c.op, build_remap(c.op, c.attrs, in), in), c.inputs[0].dtype(), c.device});
}

template <class T>
void remap_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  Tensor& out = c.outputs[0];
  const Remap map = build_remap(c.op, c.attrs, in.shape());
  const T fill = fill_as<T>(remap_fill_value(c.op, c.attrs));
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  c.runtime.thread_pool().parallel_for(out.numel(), cpu::kElementGrain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const int64_t s = map.source_offset(o);
      dst[o] = s < 0 ? fill : src[s];
    }
  });
}

// *_backward(grad; forward's attributes, input_shape) -> input_shape
void remap_backward_infer(InferCall& c) {
  check_floating(c, 0);
  const Shape in = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "input_shape"), "input_shape");
  const Shape expected = remap_output_shape(c.op, build_remap(c.op, c.attrs, in), in);
  KILN_CHECK(c.inputs[0].shape() == expected, Status::shape_mismatch, "op '", c.op.name, "': gradient of shape ",
             to_string(c.inputs[0].shape()), " for an output of shape ", to_string(expected));
  c.outputs.push_back({in, c.inputs[0].dtype(), c.device});
}

// Serial: several output elements may come from one input element.
template <class T>
void remap_backward_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  const Remap map = build_remap(c.op, c.attrs, out.shape());
  std::vector<acc_t<T>> acc(size_t(out.numel()), acc_t<T>(0));
  const T* g = c.inputs[0].data<T>();
  for (int64_t o = 0; o < c.inputs[0].numel(); ++o) {
    const int64_t s = map.source_offset(o);
    if (s >= 0) acc[size_t(s)] += load_acc(g[o]);
  }
  T* dst = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) dst[i] = store_acc<T>(acc[i]);
}

// ---- backward ----------------------------------------------------------------------

// flip, tril and triu: the gradient goes through the same op.
std::vector<Tensor> self_backward(const BackwardCall& c) {
  return {c.runtime.call1(c.op, {c.grad_outputs[0]}, c.attrs)};
}

std::vector<Tensor> roll_backward(const BackwardCall& c) {
  std::vector<int64_t> shifts = c.op.attr_ints(c.attrs, "shifts");
  for (int64_t& s : shifts) s = -s;
  return {c.runtime.call1(c.op, {c.grad_outputs[0]},
                          c.op.make_attrs({{"shifts", shifts}, {"dims", c.op.attr_ints(c.attrs, "dims")}}))};
}

// Calls "<op>_backward" with the forward's attributes and its input's shape.
std::vector<Tensor> accumulate_backward(const BackwardCall& c) {
  const OpDef& grad_op = c.runtime.op(str_cat(c.op.name, "_backward"));
  std::vector<AttrValue> values;
  for (size_t i = 0; i < c.attrs.size(); ++i) values.push_back(c.attrs[i]);
  values.push_back(dims_of(c.input_meta[0].shape));
  return {c.runtime.call1(grad_op, {c.grad_outputs[0]}, Attrs(std::move(values)))};
}

OpDef remap_op(std::string name, std::vector<AttrSpec> attrs, BackwardFn backward) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = std::move(attrs);
  op.infer = remap_infer;
  op.backward = backward;
  op.saves_inputs = op.saves_outputs = false;
  for (DType t : kAllDTypes) visit_dtype(t, [&]<class T>() { op.set_kernel(DeviceType::cpu, t, &remap_kernel<T>); });
  return op;
}

// The backward op of a forward op made by remap_op: its attributes first
// (accumulate_backward passes them in order), then input_shape.
OpDef remap_backward_op(const OpDef& forward) {
  OpDef op;
  op.name = forward.name + "_backward";
  op.inputs = {{"grad"}};
  op.attrs = forward.attrs;
  op.attrs.push_back(attr_required("input_shape", AttrType::ints));
  op.infer = remap_backward_infer;
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16})
    visit_dtype(t, [&]<class T>() { op.set_kernel(DeviceType::cpu, t, &remap_backward_kernel<T>); });
  return op;
}

}  // namespace

Remap build_remap(const OpDef& op, const Attrs& attrs, const Shape& input) {
  const std::string_view name = forward_name(op);
  if (name == "flip") return flip_map(op, attrs, input);
  if (name == "roll") return roll_map(op, attrs, input);
  if (name == "repeat") return repeat_map(op, attrs, input);
  if (name == "pad") return pad_map(op, attrs, input);
  if (name == "tril") return triangle_map(op, attrs, input, Triangle::lower);
  if (name == "triu") return triangle_map(op, attrs, input, Triangle::upper);
  throw_error(Status::internal, str_cat("op '", op.name, "' has no element map"));
}

Shape remap_output_shape(const OpDef& op, const Remap& map, const Shape& input) {
  if (forward_name(op) == "roll") return input;
  return Shape(std::span<const int64_t>(map.out_sizes, size_t(map.rank)));
}

double remap_fill_value(const OpDef& op, const Attrs& attrs) {
  return op.attr_index("value") >= 0 ? op.attr_real(attrs, "value") : 0.0;
}

void register_remap_ops(OpRegistry& r) {
  r.add(remap_op("flip", {attr_required("dims", AttrType::ints)}, self_backward));
  r.add(remap_op("roll", {attr_required("shifts", AttrType::ints), attr_ints("dims", {})}, roll_backward));
  r.add(remap_op("tril", {attr_int("diagonal", 0)}, self_backward));
  r.add(remap_op("triu", {attr_int("diagonal", 0)}, self_backward));
  const OpDef& repeat = r.add(remap_op("repeat", {attr_required("repeats", AttrType::ints)}, accumulate_backward));
  r.add(remap_backward_op(repeat));
  const OpDef& pad = r.add(remap_op(
      "pad", {attr_required("pad", AttrType::ints), attr_string("mode", "constant"), attr_real("value", 0.0)},
      accumulate_backward));
  r.add(remap_backward_op(pad));
}

}  // namespace kiln::shape
