// The language's built-in functions, in families (builtins_*.cc): the set the interpreter
// is given (language_builtins), and the helpers one family defines and others call. The
// interpreter below does not include this header.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "tracer/interp/interp.h"

namespace ytape::tracer {

/// Every family and the interpreter's two hooks (builtins.cc): what a tracer::Program
/// (tracer/program.h) runs with.
const Builtins& language_builtins();

/// The families, each adding its functions to the table.
void add_core_builtins(BuiltinTable& table);
void add_math_builtins(BuiltinTable& table);
void add_division_builtins(BuiltinTable& table);
void add_array_builtins(BuiltinTable& table);
void add_reduce_builtins(BuiltinTable& table);
void add_creation_builtins(BuiltinTable& table);
void add_random_builtins(BuiltinTable& table);
void add_sort_builtins(BuiltinTable& table);
void add_collection_builtins(BuiltinTable& table);
void add_prim_builtins(BuiltinTable& table);
void add_assign_builtins(BuiltinTable& table);
void add_vector_builtins(BuiltinTable& table);
void add_grad_builtins(BuiltinTable& table);
void add_jvp_builtins(BuiltinTable& table);
void add_vmap_builtins(BuiltinTable& table);
void add_test_builtins(BuiltinTable& table);
void add_string_builtins(BuiltinTable& table);
void add_file_builtins(BuiltinTable& table);

/// Writes `v` into the region of array `x` that `idx` selects (all of x when null): as
/// `x[idx...] = v` (setindex!), or with `broadcast` as `x[idx...] .= v`. The new value
/// is computed with pure ops and replaces x's in place (builtins_assign.cc).
void write_array(Interpreter& in, const Value& x, const Value& v, const std::vector<Value>* idx,
                 bool broadcast);
/// `v` with the gradient stopped at every traced float array or number in it (through
/// tuples, named tuples and the fields of immutable structs): Zygote's dropgrad (builtins_grad.cc).
Value stop_gradient(Interpreter& in, const Value& v);

/// `a op b` for an elementwise primitive, on scalars or tensors, with Julia's promotion
/// and weak literals.
Value elementwise_binary(Interpreter& in, Prim p, const Value& a, const Value& b);
Value elementwise_unary(Interpreter& in, Prim p, const Value& a);
/// The dtype two operands combine to.
DType result_dtype(const Value& a, const Value& b);
/// Whether Int64(v) holds float v exactly, as Julia's conversion demands (else an
/// InexactError): v is finite, integral and within [-2^63, 2^63).
inline bool exact_int64(double v) {
  return v >= -0x1p63 && v < 0x1p63 && v == std::trunc(v);
}
/// Throws unless `args` has between `lo` and `hi` positional arguments.
void need_args(const Args& args, size_t lo, size_t hi, std::string_view name);
/// `v` reshaped (a primitive, so traced values stay traced).
Value reshape_to(Interpreter& in, const Value& v, Shape shape);
/// An integer or a tuple of integers as a list (dims, sizes).
std::vector<int64_t> int_list(const Value& v, std::string_view what);
/// A concrete rank-0 tensor as a number value; other values unchanged.
Value to_scalar(const Value& v);
/// A rank-0 tensor value (a reduction's result) as a number: a scalar when concrete, a
/// traced value standing for a number otherwise.
Value as_number(const Value& rank0);
/// The element dtype of an array of these numbers, with Julia's promotion.
DType literal_dtype(const std::vector<Value>& items);
/// Throws "`what` is not defined for <v's type>", saying how to make an array of a tuple
/// or vector of values whose items are numbers (builtins_array.cc).
[[noreturn]] void not_defined_for(std::string_view what, const Value& v);
/// `x[idx...]` of a tensor x (getindex's rule for arrays, builtins_array.cc).
Value index_tensor(Interpreter& in, const Value& x, const std::vector<Value>& idx);
/// Whether `v` is an array a write can go into: a tensor that is not a number, nor an
/// element inside `f.(x)`, nor an adjoint `x'`.
bool is_writable_array(const Value& v);
/// The items of a collection argument, as Interpreter::iterate gives them at the call
/// being made (builtins_collections.cc).
std::vector<Value> items_of(Interpreter& in, const Value& v);
/// The element type and the dims of zeros(T, dims...), rand(T, (dims)), ...: the type at
/// `args.pos[first]` if a type is there (else `fallback`), then the dims, each argument an
/// integer or a tuple of them (builtins_creation.cc).
std::pair<DType, Shape> type_and_dims(const Args& args, size_t first, DType fallback);
/// An array of `shape` whose elements are all `value`: the fill primitive
/// (builtins_creation.cc).
Value filled(Interpreter& in, DType d, Shape shape, double value);
/// The permutation of 1:n that orders its positions by `less` (stable), as an Int64 vector.
template <typename Less>
Tensor stable_order(int64_t n, const Less& less) {
  Tensor order(Type{DType::i64, {n}});
  int64_t* p = order.data<int64_t>();
  for (int64_t k = 0; k < n; ++k) p[k] = k + 1;
  std::stable_sort(p, p + n, less);
  return order;
}
/// `v` (a number or an array) as a tensor of dtype `d`. Into Int and Bool arrays only
/// exact values go, as Julia's InexactError demands.
Value convert_exact(Interpreter& in, const Value& v, DType d);

}  // namespace ytape::tracer
