#include "tape/type_table.h"

#include <utility>

namespace ytape {

TypeTable::TypeTable() = default;
TypeTable::~TypeTable() = default;

TypeTable::TypeTable(const TypeTable& o) : ids_(o.ids_), index_(o.index_), last_(o.last_) {
  // The copy's keys live in its own nodes.
  distinct_.resize(o.distinct_.size());
  for (const auto& [type, i] : index_) distinct_[i] = &type;
}

// Moving an unordered_map keeps its nodes, so the pointers stay valid.
TypeTable::TypeTable(TypeTable&& o) noexcept
    : ids_(std::move(o.ids_)),
      index_(std::move(o.index_)),
      distinct_(std::move(o.distinct_)),
      last_(o.last_) {
  o.clear();
}

TypeTable& TypeTable::operator=(const TypeTable& o) {
  if (this != &o) *this = TypeTable(o);
  return *this;
}

TypeTable& TypeTable::operator=(TypeTable&& o) noexcept {
  if (this != &o) {
    ids_ = std::move(o.ids_);
    index_ = std::move(o.index_);
    distinct_ = std::move(o.distinct_);
    last_ = o.last_;
    o.clear();
  }
  return *this;
}

void TypeTable::clear() {
  ids_.clear();
  index_.clear();
  distinct_.clear();
  last_ = 0;
}

size_t TypeTable::Hash::operator()(const Type& t) const {
  size_t h = static_cast<size_t>(t.dtype) * 0x9e3779b97f4a7c15ULL;
  for (int64_t d : t.shape) h = (h ^ static_cast<size_t>(d)) * 0x100000001b3ULL + t.shape.size();
  return h;
}

uint32_t TypeTable::intern(const Type& t) {
  if (!distinct_.empty() && *distinct_[last_] == t) return last_;
  auto [it, added] = index_.try_emplace(t, static_cast<uint32_t>(distinct_.size()));
  if (added) distinct_.push_back(&it->first);
  last_ = it->second;
  return last_;
}

bool operator==(const TypeTable& a, const TypeTable& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace ytape
