#include "tracer/interp/nesting.h"

#include <fmt/format.h>

#include <algorithm>

#include "tape/error.h"
#include "tracer/interp/value.h"

namespace ytape::tracer {

namespace {

// Objects whose last reference a destructor dropped, waiting to be destroyed by the
// outermost release_later, which owns the list: a plain pointer per thread, so that static
// values destroyed at exit, after the thread's own objects, still find none or a live one.
thread_local std::vector<std::shared_ptr<const void>>* pending = nullptr;

// Kinds whose objects hold further values; the others (strings, ranges, tensors that are
// no views) are destroyed where they are dropped, which cannot recurse.
bool holds_values(const Value& v) {
  switch (v.kind) {
    case VKind::tuple:
    case VKind::named_tuple:
    case VKind::object:
    case VKind::function:
    case VKind::type:
      return true;
    case VKind::tensor:
      return v.tensor().view != nullptr;
    default:
      return false;
  }
}

}  // namespace

void nesting_error(std::string_view what) {
  user_error(
      "cannot {} a value nested more than {} levels deep (tuples, vectors or structs inside "
      "one another); keep deep data flat, in a vector",
      what, kMaxValueNesting);
}

void Nesting::enter(const Object* container, std::string_view what) {
  if (path_.size() >= kMaxValueNesting) nesting_error(what);
  path_.push_back(container);
}

size_t Nesting::levels_up(const Object* container) const {
  size_t up = 0;
  for (size_t i = path_.size(); i-- > 0;) {
    if (path_[i] == nullptr) continue;
    ++up;
    if (path_[i] == container) return up;
  }
  return 0;
}

std::string Nesting::circular_reference(size_t levels_up) {
  return fmt::format("#= circular reference @-{} =#", levels_up);
}

namespace {

// `path` for a message: cut after 60 characters, as a path 1000 levels deep is long.
std::string short_path(const std::string& path) {
  return path.size() <= 60 ? path : path.substr(0, 60) + "…";
}

}  // namespace

void PathWalk::enter(const Value& v, const std::string& path) {
  for (const auto& [container, at] : inside_) {
    if (container != v.obj.get()) continue;
    user_error(
        "{} '{}' is '{}' itself: a structure that contains itself cannot be traced, as the "
        "tape's names for its parts (paths) would never end; {}",
        what_, short_path(path), short_path(at), fix_);
  }
  if (inside_.size() >= kMaxValueNesting) {
    user_error(
        "{} '{}' nests more than {} levels deep (tuples, vectors or structs inside one "
        "another), deeper than ytape traces; flatten it",
        what_, short_path(path), kMaxValueNesting);
  }
  inside_.emplace_back(v.obj.get(), path);
}

bool is_container(const Value& v) {
  return v.kind == VKind::tuple || v.kind == VKind::named_tuple || v.kind == VKind::object;
}

namespace {

// The values a container holds: a tuple's items or an instance's fields.
std::vector<Value>& held_values(const Object& container, VKind kind) {
  auto& object = const_cast<Object&>(container);
  if (kind == VKind::object) return static_cast<StructObj&>(object).fields;
  return static_cast<TupleObj&>(object).items;
}

}  // namespace

void CycleCandidates::note(const std::shared_ptr<const Object>& container) {
  auto [at, added] = noted_.try_emplace(container.get(), container);
  if (!added && at->second.expired()) at->second = container;  // a new object, same address
  if (noted_.size() >= prune_at_) {
    std::erase_if(noted_, [](const auto& entry) { return entry.second.expired(); });
    prune_at_ = std::max<size_t>(1024, 2 * noted_.size());
  }
}

namespace {

// The containers reachable from some, held while references to them are counted.
struct ContainerGraph {
  std::vector<std::shared_ptr<const Object>> nodes;
  std::vector<VKind> kinds;
  std::unordered_map<const Object*, size_t> index;

  void add(const std::shared_ptr<const Object>& p, VKind kind) {
    if (index.try_emplace(p.get(), nodes.size()).second) {
      nodes.push_back(p);
      kinds.push_back(kind);
    }
  }
  // Adds what the nodes hold, and what that holds, ...
  void close() {
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const Value& v : held_values(*nodes[i], kinds[i])) {
        if (is_container(v)) add(v.obj, v.kind);
      }
    }
  }
  // Whether each node is held from outside the graph, or reached from one that is.
  std::vector<bool> alive() {
    std::vector<size_t> inside(nodes.size(), 0);  // references from the nodes
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const Value& v : held_values(*nodes[i], kinds[i])) {
        if (is_container(v)) ++inside[index.at(v.obj.get())];
      }
    }
    std::vector<bool> alive(nodes.size(), false);
    std::vector<size_t> stack;
    for (size_t i = 0; i < nodes.size(); ++i) {
      // One owner more than the nodes' references is `nodes` itself.
      if (static_cast<size_t>(nodes[i].use_count()) > inside[i] + 1) stack.push_back(i);
    }
    while (!stack.empty()) {
      size_t i = stack.back();
      stack.pop_back();
      if (alive[i]) continue;
      alive[i] = true;
      for (const Value& v : held_values(*nodes[i], kinds[i])) {
        if (is_container(v)) stack.push_back(index.at(v.obj.get()));
      }
    }
    return alive;
  }
};

}  // namespace

void CycleCandidates::free_cycles() {
  ContainerGraph graph;
  for (const auto& [address, weak] : noted_) {
    // A noted container is a vector of values or a mutable instance.
    if (std::shared_ptr<const Object> p = weak.lock()) {
      graph.add(p, dynamic_cast<const StructObj*>(p.get()) ? VKind::object : VKind::tuple);
    }
  }
  noted_.clear();
  graph.close();
  std::vector<bool> alive = graph.alive();
  // The rest only cycles keep: emptied, they are freed when the graph lets go of them.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (alive[i]) continue;
    std::vector<Value>& held = held_values(*graph.nodes[i], graph.kinds[i]);
    if (graph.kinds[i] == VKind::object) {
      std::fill(held.begin(), held.end(), Value());  // an instance keeps its field count
    } else {
      held.clear();
    }
  }
}

void release_later(std::shared_ptr<const void> p) {
  // Another owner keeps it alive: dropping this reference destroys nothing.
  if (p == nullptr || p.use_count() != 1) return;
  if (pending != nullptr) {
    pending->push_back(std::move(p));
    return;
  }
  std::vector<std::shared_ptr<const void>> later;  // allocates only for a nested object
  pending = &later;
  p.reset();  // its destructor adds what it held to `later`
  while (!later.empty()) {
    std::shared_ptr<const void> next = std::move(later.back());
    later.pop_back();
    next.reset();
  }
  pending = nullptr;
}

void release_value(Value& v) {
  if (v.obj != nullptr && holds_values(v)) release_later(std::move(v.obj));
}

void release_values(std::vector<Value>& values) {
  for (Value& v : values) release_value(v);
}

}  // namespace ytape::tracer
