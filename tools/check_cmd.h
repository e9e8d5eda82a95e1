// `graft check`: the conformance run a vendor points at its own compiler
// plugin and dispatch library (Graft's ABI or LiteRT's). The checks live in
// tools/check/ (conformance.h); this is the command line.
#ifndef GRAFT_TOOLS_CHECK_CMD_H_
#define GRAFT_TOOLS_CHECK_CMD_H_

#include <ostream>
#include <string>

#include "absl/types/span.h"

namespace graft::tools {

// Exit status: 0 every check passed (warnings allowed), 1 a check failed,
// 2 a bad command line.
int RunCheckCommand(absl::Span<const std::string> args, std::ostream& out,
                    std::ostream& err);

inline constexpr char kCheckSummary[] =
    "conformance checks of a vendor's compiler plugin and dispatch library";

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_CHECK_CMD_H_
