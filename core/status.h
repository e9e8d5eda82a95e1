// Early-return helpers for absl::Status / absl::StatusOr (abseil 20220623 has
// none). Graft code never throws; every fallible function returns a status.
#ifndef GRAFT_CORE_STATUS_H_
#define GRAFT_CORE_STATUS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GRAFT_STATUS_CONCAT_INNER_(a, b) a##b
#define GRAFT_STATUS_CONCAT_(a, b) GRAFT_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the enclosing
// function if it is not OK.
#define GRAFT_RETURN_IF_ERROR(expr)                        \
  do {                                                     \
    ::absl::Status graft_status_macro_value_ = (expr);     \
    if (!graft_status_macro_value_.ok()) {                 \
      return graft_status_macro_value_;                    \
    }                                                      \
  } while (0)

// `GRAFT_ASSIGN_OR_RETURN(auto x, F());` evaluates F() (an absl::StatusOr<T>),
// returns its status if it is not OK, and otherwise moves its value into x.
#define GRAFT_ASSIGN_OR_RETURN(lhs, rexpr) \
  GRAFT_ASSIGN_OR_RETURN_IMPL_(            \
      GRAFT_STATUS_CONCAT_(graft_statusor_, __LINE__), lhs, rexpr)

#define GRAFT_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) {                                    \
    return std::move(statusor).status();                   \
  }                                                        \
  lhs = std::move(statusor).value()

#endif  // GRAFT_CORE_STATUS_H_
