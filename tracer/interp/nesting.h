// Values nested as deep as a program likes (a loop can wrap a tuple in a tuple 10^6
// times) without the stack overflowing: walks of a value stop at a depth with a clear
// error and find the cycles that mutable containers make, and the destructors of the
// objects that hold values do not recurse.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ytape::tracer {

struct Object;
struct Value;

/// How deep the walks of a value go (printing, `==`, `deepcopy`, `typeof`, the lifting
/// of a trace's arguments) and how deep types nest: beyond this many tuples, vectors and
/// structs inside one another they stop with a UserError rather than overflow the stack.
/// As the 1000 nested calls a program may make, enough for any model.
inline constexpr size_t kMaxValueNesting = 1000;

/// The UserError of a walk that would go deeper than kMaxValueNesting: "cannot `what` a
/// value nested more than 1000 levels deep ...".
[[noreturn]] void nesting_error(std::string_view what);

/// The containers a recursive walk of a value is inside, outermost first. It bounds the
/// walk's depth and finds a container met again inside itself, which only a mutable one
/// (a vector of values, a mutable struct) can be.
class Nesting {
 public:
  /// Enters `container` (a tuple, vector or struct); nesting_error(what) beyond
  /// kMaxValueNesting levels. leave() after. A null container counts for the depth only:
  /// one that cannot be met again and that levels_up does not count (show's named tuples
  /// and pairs, as Julia's).
  void enter(const Object* container, std::string_view what);
  void leave() { path_.pop_back(); }
  size_t depth() const { return path_.size(); }
  /// How many levels up the walk is inside `container` already (1: the innermost
  /// container entered), or 0 when it is not.
  size_t levels_up(const Object* container) const;
  /// Julia's text for a container shown inside itself, `levels_up` containers up:
  /// `#= circular reference @-1 =#`.
  static std::string circular_reference(size_t levels_up);

 private:
  std::vector<const Object*> path_;
};

/// The containers a walk of values that names their parts by path is inside (the inputs
/// and outputs of a trace: `model.layers.1.weight`), with their paths. A container met
/// again inside itself, whose paths would never end, is a UserError naming both paths,
/// and so is nesting deeper than kMaxValueNesting.
class PathWalk {
 public:
  /// `what` starts the messages ("argument"); `fix` ends that of a cycle ("pass the parts
  /// the function needs").
  PathWalk(std::string_view what, std::string_view fix) : what_(what), fix_(fix) {}
  /// Enters the container `v` (a tuple, vector or struct) at `path`.
  void enter(const Value& v, const std::string& path);
  void leave() { inside_.pop_back(); }
  size_t depth() const { return inside_.size(); }

 private:
  std::string what_, fix_;
  std::vector<std::pair<const Object*, std::string>> inside_;
};

/// Nesting::enter, and leave at the end of the scope.
class NestingScope {
 public:
  NestingScope(Nesting& nesting, const Object* container, std::string_view what)
      : nesting_(nesting) {
    nesting.enter(container, what);
  }
  ~NestingScope() { nesting_.leave(); }
  NestingScope(const NestingScope&) = delete;
  NestingScope& operator=(const NestingScope&) = delete;

 private:
  Nesting& nesting_;
};

/// The mutable containers (vectors of values, instances of mutable structs) that were given
/// containers to hold, by a write or by deepcopy: only those can close a reference cycle (a
/// vector that holds itself), which shared pointers alone never free.
class CycleCandidates {
 public:
  CycleCandidates() = default;
  CycleCandidates(const CycleCandidates&) = delete;
  CycleCandidates& operator=(const CycleCandidates&) = delete;
  ~CycleCandidates() { free_cycles(); }

  /// Notes `container`, which was just given a container to hold (is_container).
  void note(const std::shared_ptr<const Object>& container);
  /// Empties the containers that only reference cycles keep alive, which frees them; what
  /// anything else still holds, a value kept by the caller, stays as it is. Forgets all.
  void free_cycles();

 private:
  std::unordered_map<const Object*, std::weak_ptr<const Object>> noted_;
  size_t prune_at_ = 1024;  // noted_ drops its dead entries when it grows to this size
};

/// Whether `v` is a container, which a mutable container holding it could be inside
/// itself: a tuple, named tuple, vector of values or struct instance.
bool is_container(const Value& v);

/// Drops `p`. Where that destroys its object, and the object's destructor drops more
/// (the items of a tuple, a closure's scope), those are destroyed after it, one after
/// another, by the outermost such call: destroying a chain of 10^6 objects takes constant
/// stack. The destructors of objects that hold values call it for what they hold.
void release_later(std::shared_ptr<const void> p);
/// release_later of `v`'s object where it can hold further values (`v` keeps its kind).
void release_value(Value& v);
/// release_value of each of `values`.
void release_values(std::vector<Value>& values);

}  // namespace ytape::tracer
