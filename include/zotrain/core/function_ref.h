// A non-owning reference to a callable, for parameters that are called during the call and not
// kept (parallel regions, per-tensor transforms): unlike std::function it never allocates, so a
// training step makes no heap calls (the bare-metal device program checks that it makes none).
// The callable must outlive the FunctionRef.
#pragma once

#include <type_traits>
#include <utility>

namespace zotrain {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                        std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f)  // NOLINT: converts implicitly, as std::function does
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace zotrain
