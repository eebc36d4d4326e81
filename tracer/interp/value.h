// Values of the model language as the interpreter sees them. A Value is small and cheap to
// copy: scalars live inline, everything else behind a shared pointer to an immutable
// payload, so copies share. Values are immutable except instances of mutable structs,
// whose fields Interpreter::set_field replaces in place (every copy sees the write, as in
// Julia), and a function's method table, which grows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/tensor.h"
#include "tape/tape.h"
#include "tracer/lang/ast.h"

namespace ytape::tracer {

enum class VKind : uint8_t {
  nothing,
  boolean,
  integer,
  float_,
  string,
  symbol,
  tuple,
  named_tuple,
  object,
  function,
  range,
  type,
  tensor
};

/// The payloads behind Value::obj; which one is given by the Value's kind.
/// A number for each new object and scope (Env), increasing: which existed before a given
/// moment (a loop traced as a scan may write only into its own).
inline uint64_t next_serial() {
  static thread_local uint64_t made = 0;
  return ++made;
}

struct Object {
  virtual ~Object() = default;
  uint64_t serial = next_serial();
};

class Interpreter;
struct Env;
struct TypeObj;
struct TensorObj;
struct TupleObj;
struct StructObj;
struct FunctionObj;
struct RangeObj;
using TypeRef = std::shared_ptr<const TypeObj>;

// Defined before the objects that hold values (tuples, structs, arguments), which keep
// them in vectors: a vector's element type must be complete where the vector is used.
struct Value {
  VKind kind = VKind::nothing;
  bool weak = false;         ///< floats: an untyped literal, which adopts a tensor's dtype
  DType dtype = DType::f64;  ///< floats
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::shared_ptr<const Object> obj;

  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value floating(double v, DType dtype, bool weak = false);
  static Value string(std::string text);
  static Value symbol(std::string name);
  static Value tuple(std::vector<Value> items);
  static Value vector(std::vector<Value> items);  ///< TupleObj::vector
  /// A tuple, named tuple or vector of values as `t` is, holding `items` (as many as t's).
  static Value like(const TupleObj& t, std::vector<Value> items);
  /// An instance of struct type `type` with these fields (no constructor runs); `made`:
  /// where the program constructed it, `path`: its place in a traced function's argument
  /// (StructObj).
  static Value instance(TypeRef type, std::vector<Value> fields, Pos made = {},
                        std::string path = {});
  static Value named_tuple(std::vector<std::string> names, std::vector<Value> items);
  static Value type(TypeRef t);
  static Value range(int64_t start, int64_t step, int64_t stop);
  static Value concrete(Tensor t, bool number = false);
  /// A var of a trace's tape: of the trace being recorded now (the level set by
  /// set_trace_level), or of the trace at `level`.
  static Value traced(Var v, Type type, bool number = false, uint32_t level = kCurrentLevel);
  static constexpr uint32_t kCurrentLevel = ~uint32_t{0};

  bool is_tensor() const { return kind == VKind::tensor; }
  /// Numbers: ints, floats, bools, and rank-0 tensors that stand for numbers.
  bool is_number() const;
  // The object, by kind (defined below, once the object types are complete).
  const TensorObj& tensor() const;
  const TupleObj& tup() const;
  const StructObj& object() const;
  const FunctionObj& fn() const;
  const RangeObj& rng() const;
  const TypeRef type_ref() const;
  const std::string& text() const;
};

/// Positional and keyword arguments of a call.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
};

/// A built-in function: computes its result or throws UserError (the interpreter adds the
/// program position and call stack).
using Builtin = Value (*)(Interpreter& in, Args& args);

/// The lattice of types used by dispatch and `isa`. Struct and abstract types declared by
/// the program are `user` types with a supertype.
enum class TypeTag : uint8_t {
  any,
  number,
  real,
  abstract_float,
  integer,
  float32,
  float64,
  float16,
  int64,
  boolean,
  abstract_array,
  string,
  symbol,
  tuple,
  named_tuple,
  function,
  nothing,
  range,
  type,
  union_,  ///< `Union{A, B}`: params are the members; `Union` alone (no members) has no values
  val,     ///< `Val{x}`: a type standing for the value x; `Val` alone: any of them
  user
};

struct TypeObj : Object {
  std::string name;
  TypeTag tag = TypeTag::any;
  std::shared_ptr<const TypeObj> super;  ///< user types: the declared supertype, or null
  bool is_abstract = false;
  bool is_mutable = false;  ///< `mutable struct`: fields can be assigned
  bool program = false;     ///< user types: defined by the program, not the prelude
  bool layer = false;       ///< user types: a layer (the program's types, Flux's): calls are scopes
  const StructDef* kwdef = nullptr;  ///< `@kwdef struct`: its definition, for the defaults
  std::vector<std::string> fields;   ///< struct types
  std::vector<std::shared_ptr<const TypeObj>> field_types;  ///< null where not declared
  bool has_eltype = false;  ///< `AbstractArray{Float32}`: the element type
  DType eltype = DType::f32;
  int rank = -1;  ///< `AbstractArray{T, 2}`, `Matrix`: the rank; -1 any
  /// `Union{A, B}`: the members (flattened, none below another); `Tuple{A, B}`,
  /// `NTuple{2, A}`: the item types, null where any.
  std::vector<std::shared_ptr<const TypeObj>> params;
  bool has_params = false;  ///< tuples: `Tuple{...}`, of params.size() items
  bool vararg = false;      ///< tuples: `NTuple{N, T} where N`: any number of params[0]
  /// `Type{T}` has params {T}: its one value is the type T; `Type{<:T}` (covariant) has
  /// every type below T.
  bool covariant = false;
  std::optional<Value> val;  ///< `Val{2}`: 2; none for `Val` (any Val)
  /// `typeof(f)` of a function f: the type whose one value is f (weak: f's methods may
  /// name it), below Function. `function_of` is set exactly then.
  bool function_of = false;
  std::weak_ptr<const Object> function;
  /// A struct with type parameters (`struct Complex{T} re::T; im::T end`): per field, the
  /// parameter it is declared as (0 for `re::T`), or -1. An instance's type takes each
  /// parameter from the first field declared as it; empty unless every parameter has one.
  std::vector<int> field_params;
  /// The number of type parameters of a struct with field_params.
  size_t param_count() const;
  /// `Complex{Float64}`: the struct type it instantiates, the parameters in `params`.
  std::shared_ptr<const TypeObj> generic;
  /// Levels of types inside one another: 1, 2 for `Val{Int}` or `Tuple{Int}`, ... (set by
  /// set_nesting).
  size_t nesting = 1;
};
struct StringObj : Object {
  std::string text;
};

// The objects that hold values release them with release_later (nesting.h), so that
// destroying a value nested 10^6 deep does not recurse.

/// Tuples and named tuples (names empty for a tuple).
struct TupleObj : Object {
  TupleObj() = default;
  TupleObj(const TupleObj&) = default;
  ~TupleObj() override;
  std::vector<Value> items;
  std::vector<std::string> names;
  /// A vector of values that are not all numbers (`[]`, `[layer1, layer2]`): a tuple
  /// here, but one that push!, pop!, setindex! and the like change in place, as Julia's
  /// Vector{Any}.
  bool vector = false;
};

/// An instance of a struct type.
struct StructObj : Object {
  StructObj() = default;
  StructObj(const StructObj&) = default;
  ~StructObj() override;
  TypeRef type;
  std::vector<Value> fields;
  /// For the scopes of layer calls (Tape::scopes): the program's line that constructed it,
  /// and its place in the traced function's argument it came from ("model.layers[1]").
  Pos made;
  std::string path;
};

/// One method of a user function: a definition in the program and the environment it
/// closes over.
struct Method {
  const Function* def = nullptr;
  Pos pos;  ///< of the definition, for messages
  std::shared_ptr<Env> env;
  std::vector<TypeRef> types;  ///< per positional parameter; null means Any
  TypeRef receiver;            ///< callable struct methods: the struct type
};

struct FunctionObj : Object {
  FunctionObj() = default;
  FunctionObj(const FunctionObj&) = default;
  ~FunctionObj() override;
  std::string name;
  mutable std::vector<Method> methods;  ///< grows as the program defines methods
  Builtin builtin = nullptr;            ///< tried when no user method applies
  /// Declared non-differentiable (ChainRulesCore's @non_differentiable, Zygote's @nograd):
  /// every call's result stops the gradient, whatever the method.
  mutable bool stops_gradient = false;
};

struct RangeObj : Object {
  int64_t start = 1, step = 1, stop = 0;
  /// The number of elements; throws UserError (Julia's OverflowError) past Int64.
  int64_t length() const;
  /// Element i (0-based) of the length() elements, computed modulo 2^64: i * step may
  /// pass Int64 on the way where the element does not (typemin(Int)+1:4:typemax(Int)).
  int64_t at(int64_t i) const {
    return static_cast<int64_t>(static_cast<uint64_t>(start) +
                                static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
  }
};

/// A tensor: concrete data, or a var of the tape being traced.
struct TensorObj : Object {
  TensorObj() = default;
  TensorObj(const TensorObj&) = default;
  TensorObj(TensorObj&&) = default;
  TensorObj& operator=(const TensorObj&) = default;
  TensorObj& operator=(TensorObj&&) = default;
  ~TensorObj() override;
  Type type;
  Tensor data;  ///< concrete tensors only
  bool traced = false;
  Var var;  ///< traced tensors only
  /// Traced tensors: the trace whose tape holds `var`. 0 is the outermost; `gradient`
  /// inside a trace records its function on a trace of the next level (Interpreter).
  uint32_t level = 0;
  bool number = false;  ///< a rank-0 value standing for a number (a traced scalar)
  /// `x'` of a vector: a 1×n matrix that, as Julia's Adjoint, `*` contracts with a vector
  /// to a number (`x'y`) and whose own adjoint is the vector again.
  bool adjoint_vector = false;
  /// Inside `f.(x)` for a user function f: x, or a value computed elementwise from it,
  /// standing for each of its elements (Julia calls f once per element; ytape once on
  /// the whole array). Arithmetic on elements is elementwise, a reduction of one is the
  /// element itself; arrays f reaches otherwise (captured ones) keep their meaning.
  bool element = false;
  /// The result of `@view x[...]` or `view(x, ...)`: the array it reads and the indices,
  /// so that, as Julia's views, a write into the view writes into that array and a write
  /// into the array is seen through the view (its value is read again).
  struct ViewOf {
    ~ViewOf();
    std::shared_ptr<const Object> parent;
    std::vector<Value> index;
  };
  std::shared_ptr<const ViewOf> view;              ///< views only
  std::vector<std::weak_ptr<const Object>> views;  ///< the live views of this array
  /// One of the slices of `eachslice(x; dims)` (eachcol, eachrow, and what a traced map
  /// or accumulate gives): x, the dim and the 1-based index, so that foldl, map,
  /// accumulate, comprehensions and stack over all of them trace as a scan over x, or x.
  struct SliceOf {
    Value parent;
    int dim = 0;
    int64_t index = 0;
  };
  std::shared_ptr<const SliceOf> slice_of;
};

/// The level of the trace being recorded, given to new traced values (Interpreter sets it
/// as traces nest; the interpreter runs on one thread).
void set_trace_level(uint32_t level);

inline const TensorObj& Value::tensor() const {
  return static_cast<const TensorObj&>(*obj);
}
/// Whether `v` is an array standing for its elements (TensorObj::element).
inline bool is_element(const Value& v) {
  return v.is_tensor() && v.tensor().element;
}
/// Whether `v` is a vector of values (TupleObj::vector).
inline bool is_value_vector(const Value& v) {
  return v.kind == VKind::tuple && static_cast<const TupleObj&>(*v.obj).vector;
}
/// Whether `v` is an instance of a struct below Number (a Complex).
bool is_number_struct(const Value& v);
/// `v` with TensorObj::element set to `on` (a tensor value; others are returned as they are).
Value with_element(Value v, bool on);
/// Tensor `v` as slice `index` of `parent` along `dim` (TensorObj::slice_of).
Value with_slice_of(Value v, Value parent, int dim, int64_t index);

inline const TupleObj& Value::tup() const {
  return static_cast<const TupleObj&>(*obj);
}
inline const StructObj& Value::object() const {
  return static_cast<const StructObj&>(*obj);
}
inline const FunctionObj& Value::fn() const {
  return static_cast<const FunctionObj&>(*obj);
}
inline const RangeObj& Value::rng() const {
  return static_cast<const RangeObj&>(*obj);
}
inline const TypeRef Value::type_ref() const {
  return std::static_pointer_cast<const TypeObj>(obj);
}
inline const std::string& Value::text() const {
  return static_cast<const StringObj&>(*obj).text;
}

/// A built-in type by tag (`Float32`, `Number`, ...).
TypeRef builtin_type(TypeTag tag);
/// Colon, the type of `:`.
TypeRef colon_type();
/// Every built-in type name with its type, for the global environment.
std::vector<std::pair<std::string, TypeRef>> builtin_type_names();
/// The type of a float or tensor element: Float32, Float64, Int64 or Bool.
TypeRef dtype_type(DType dtype);

/// The struct type `generic` instantiated with `params` (`Complex{Float64}`): a subtype of
/// it, equal to every instantiation with the same parameters.
TypeRef instantiate(const TypeRef& generic, const std::vector<TypeRef>& params);
/// The type an instance of struct type `t` with these fields has: `t` instantiated with the
/// types of the fields its parameters name (`Complex{Int64}` for `Complex(1, 2)`), or `t`
/// itself where a parameter names no field or a field's value has no type here.
TypeRef instance_type(const TypeRef& t, const std::vector<Value>& fields);
/// The element type of a vector of values: its items' type where they are numbers of one
/// struct type (`ComplexF64`), Any otherwise.
TypeRef value_vector_eltype(const TupleObj& t);
/// Where `v` is a complex number or holds them (a vector of values), what to do instead
/// of giving it to what takes numbers and arrays of the tape's dtypes, to end an error
/// message; empty otherwise.
std::string complex_note(const Value& v);
/// Whether `v isa t`.
bool isa(const Value& v, const TypeObj& t);
/// Whether every value of `a` is of `b` (a <: b).
bool subtype(const TypeObj& a, const TypeObj& b);
/// Whether a method parameter of type `a` is at least as specific as one of type `b`, as
/// Julia ranks them: a <: b, or `a` is a Union with a member as specific as `b` and `b` is
/// not below `a` (so `Union{Int, Nothing}` is more specific than `Integer`, less than `Int`).
bool as_specific_type(const TypeObj& a, const TypeObj& b);
/// `Union{members...}` as Julia simplifies it: nested unions flattened, a member below
/// another dropped, a single member returned as it is. UserError for `Union{}`.
TypeRef make_union(const std::vector<TypeRef>& members);
/// Sets `t.nesting` from its parameters and its Val value, where they are types: a
/// UserError when that is more than kMaxValueNesting (nesting.h), as a loop that wraps a
/// type in `Val{...}` or `Tuple{...}` each time makes it. Every type made with parameters
/// calls it, so that walks of types (their names, subtype, destructors) stay bounded.
void set_nesting(TypeObj& t);
/// `Val{x}`: UserError unless x is a plain value (a number, Bool, Symbol, nothing, a type).
TypeRef make_val_type(const Value& x);
/// The name of the type of `v` for messages: "Int64", "Float32", "Array{Float32, 2}".
std::string type_name_of(const Value& v);
/// The same with its article, for messages: "an Int64", "a Float32", "an Array{Float32, 1}".
std::string a_type_name(const Value& v);
/// Julia's `show` (and `repr`) of a value, also used inside containers: 1, 2.5, 2.5f0,
/// "text", :sym, (1, "a"), Dense(...), [1.0, 2.0], Float32[1.0 3.0; 2.0 4.0]. Defined in
/// show.cc.
std::string show(const Value& v);
/// Julia's `print` (and `string`, `$x`): like `show`, but strings and symbols are bare and
/// a Float32 number has no suffix (1.0).
std::string print_text(const Value& v);
/// A scalar value as a double (ints, floats, bools); InternalError otherwise.
double as_double(const Value& v);

/// The dtype of a number or tensor value (Int64 for integers and other values).
DType dtype_of_value(const Value& v);
/// A keyword argument, or nullptr.
const Value* keyword(const Args& args, std::string_view name);
/// A range's values as a concrete Int64 vector (`collect(r)`).
Value range_array(const RangeObj& r);

}  // namespace ytape::tracer
