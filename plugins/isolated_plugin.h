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
// the next call. Plugin load, create and destroy stay in the calling
// process.
#ifndef GRAFT_PLUGINS_ISOLATED_PLUGIN_H_
#define GRAFT_PLUGINS_ISOLATED_PLUGIN_H_

#include <memory>

#include "absl/time/time.h"
#include "plugins/compiler_plugin.h"

namespace graft {

struct IsolationLimits {
  absl::Duration partition = absl::Minutes(2);
  absl::Duration compile = absl::Minutes(10);
};

// `plugin` behind a child process for each call. Info and label are its.
std::unique_ptr<CompilerPlugin> IsolatePlugin(
    std::unique_ptr<CompilerPlugin> plugin, IsolationLimits limits = {});

}  // namespace graft

#endif  // GRAFT_PLUGINS_ISOLATED_PLUGIN_H_
