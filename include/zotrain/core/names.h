// The names of an enum's values, as flags, config files, JSON and messages spell them: one table
// per enum, declared beside it as a specialization of Names<E>,
//   template <> struct Names<Method> { static constexpr NameOf<Method> list[] = {...}; };
// so that a value added to the enum is named in one place.
#pragma once

#include <string>

#include "zotrain/core/error.h"

namespace zotrain {

template <typename E>
struct NameOf {
  E value;
  const char* name;
};

template <typename E>
struct Names;

template <typename E>
concept Named = requires {
  Names<E>::list;
};

template <Named E>
const char* name_of(E e) {
  for (const NameOf<E>& n : Names<E>::list)
    if (n.value == e) return n.name;
  ZT_ASSERT(false && "every value of a named enum has a name");
  return "";
}

// "a, b or c".
template <Named E>
std::string names_of() {
  std::string s;
  const size_t n = std::size(Names<E>::list);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 == n ? " or " : ", ";
    s += Names<E>::list[i].name;
  }
  return s;
}

// The value named `text`, or false.
template <Named E>
bool parse_name(const std::string& text, E* out) {
  for (const NameOf<E>& n : Names<E>::list)
    if (text == n.name) return *out = n.value, true;
  return false;
}

// The value named `text`; InputError naming `what` (a key, a flag) and the names it takes.
template <Named E>
E parse_name(const std::string& what, const std::string& text) {
  E e{};
  if (!parse_name(text, &e))
    ZT_THROW(InputError(what + ": '" + text + "' is not " + names_of<E>()));
  return e;
}

}  // namespace zotrain
