// An enum's ids, the way every enum <-> id pair is written: one table of (value, id) rows per
// enum, in the enum's order, and the two lookups below. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace wb {

// Each value of an enum with the id a config, result set or trace spells it with.
template <class E>
using Ids = std::pair<E, std::string_view>;

// The id of `value` in `ids`, "" when the table lacks it.
template <class E, std::size_t N>
constexpr std::string_view id_in(const Ids<E> (&ids)[N], E value) {
  for (const auto& [v, id] : ids)
    if (v == value) return id;
  return {};
}

// The value whose id is `id`, nullopt when none is.
template <class E, std::size_t N>
constexpr std::optional<E> value_in(const Ids<E> (&ids)[N], std::string_view id) {
  for (const auto& [v, name] : ids)
    if (name == id) return v;
  return std::nullopt;
}

}  // namespace wb
