// The `graft` command-line tool: dispatches to one subcommand.
//
// Adding a subcommand: write `int RunXCommand(absl::Span<const std::string>
// args, std::ostream& out, std::ostream& err)` (it handles its own --help)
// and add one line to kCommands below.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "tools/apply_cmd.h"
#include "tools/bench_cmd.h"
#include "tools/check_cmd.h"
#include "tools/inspect.h"
#include "tools/run_cmd.h"

#ifndef GRAFT_VERSION
#define GRAFT_VERSION "unknown"
#endif

namespace graft::tools {
namespace {

using CommandFn = int (*)(absl::Span<const std::string> args,
                          std::ostream& out, std::ostream& err);

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
};

constexpr Command kCommands[] = {
    {"inspect", kInspectSummary, RunInspectCommand},
    {"apply", kApplySummary, RunApplyCommand},
    {"run", kRunSummary, RunRunCommand},
    {"bench", kBenchSummary, RunBenchCommand},
    {"check", kCheckSummary, RunCheckCommand},
};

// Exit statuses shared by all subcommands.
constexpr int kExitUsage = 2;

const Command* FindCommand(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

void PrintUsage(std::ostream& out) {
  out << "usage: graft <command> [args]\n"
         "       graft help <command>\n"
         "       graft --version\n\n"
         "Graft runs ML models on vendor accelerators through compiler "
         "plugins.\n\ncommands:\n";
  for (const Command& c : kCommands) {
    std::string name = c.name;
    name.resize(std::max<size_t>(name.size(), 10), ' ');
    out << "  " << name << "  " << c.summary << "\n";
  }
  out << "\nRun 'graft help <command>' for a command's flags.\n";
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintUsage(std::cerr);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    PrintUsage(std::cout);
    return 0;
  }
  if (first == "--version") {
    std::cout << "graft " << GRAFT_VERSION << "\n";
    return 0;
  }
  if (first == "help") {
    if (args.size() == 1) {
      PrintUsage(std::cout);
      return 0;
    }
    const Command* c = FindCommand(args[1]);
    if (c == nullptr) {
      std::cerr << "graft: unknown command '" << args[1] << "'\n\n";
      PrintUsage(std::cerr);
      return kExitUsage;
    }
    const std::string help[] = {"--help"};
    return c->run(absl::MakeConstSpan(help), std::cout, std::cerr);
  }
  const Command* c = FindCommand(first);
  if (c == nullptr) {
    std::cerr << "graft: unknown command '" << first << "'\n\n";
    PrintUsage(std::cerr);
    return kExitUsage;
  }
  return c->run(absl::MakeConstSpan(args).subspan(1), std::cout, std::cerr);
}

}  // namespace
}  // namespace graft::tools

int main(int argc, char** argv) { return graft::tools::Main(argc, argv); }
