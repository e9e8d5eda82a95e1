// IsolatedPlugin: another CompilerPlugin whose calls into vendor code
// (CheckCompatibility, Partition, Compile) run in a child process with a
// time limit (child_process.h), so that a plugin that crashes, aborts,
// calls exit() or hangs in them is an error naming the vendor, the call and
// the signal or time-out, and never the end of Graft. Both vendor ABIs get
// it the same way: it wraps whichever adapter LoadCompilerPlugin made.
//
// The answers cross back as bytes: decisions through a pipe, compiled
// modules through a memory file the parent maps and then uses in place
// (CompiledPartitions::owner_is_plain_memory), so bytecode is copied once.
// Each call forks the process as it is, plugin instance included; nothing
// the plugin changes in the child (caches, counters) reaches the parent or
// the next call. Plugin load and create stay in the calling process.
//
// Destroy runs in a child too, at Close() (or, when nobody called it, in the
// destructor, whose failure is then only logged): a plugin that crashes
// while freeing its instance must not end `graft apply` after the output
// was written. The parent's copy of the instance is never destroyed: it is
// kept, reachable, until the process ends (its memory, nothing more: files
// and other shared state the vendor's destroy cleans up are cleaned by the
// child's).
#ifndef GRAFT_PLUGINS_ISOLATED_PLUGIN_H_
#define GRAFT_PLUGINS_ISOLATED_PLUGIN_H_

#include <memory>

#include "absl/time/time.h"
#include "plugins/compiler_plugin.h"

namespace graft {

struct IsolationLimits {
  // Also the limit of the compatibility check and of destroy.
  absl::Duration partition = absl::Minutes(2);
  absl::Duration compile = absl::Minutes(10);
};

// `plugin` behind a child process for each call. Info and label are its.
std::unique_ptr<CompilerPlugin> IsolatePlugin(
    std::unique_ptr<CompilerPlugin> plugin, IsolationLimits limits = {});

}  // namespace graft

#endif  // GRAFT_PLUGINS_ISOLATED_PLUGIN_H_
