// Helpers for the tests that run the `graft` binary: run it through the
// shell capturing stdout and stderr, and check JSON output.
#ifndef GRAFT_TESTS_CLI_CLI_TEST_UTIL_H_
#define GRAFT_TESTS_CLI_CLI_TEST_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/test_support.h"
#include "gtest/gtest.h"

namespace graft::testing {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `graft ARGS...`, capturing stdout and stderr through files.
inline Result RunGraft(const std::vector<std::string>& args,
                       const std::string& stdout_filter = "") {
  static int counter = 0;
  std::string base = ::testing::TempDir() + "/graft_cli_" +
                     std::to_string(::getpid()) + "_" +
                     std::to_string(counter++);
  std::string cmd = ShellQuote(BinaryDir() + "/graft");
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  cmd += " >" + ShellQuote(base + ".out") + " 2>" + ShellQuote(base + ".err");
  Result r;
  int status = std::system(cmd.c_str());
  r.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(base + ".out");
  r.err = ReadFile(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

inline bool HavePython() {
  return std::system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

// Whether `text` parses as JSON and the Python expression `condition` over
// the parsed document `d` is true (python3's json module). The expression
// is written to a file, so it may hold any quotes.
inline bool JsonSatisfies(const std::string& text,
                          const std::string& condition) {
  std::string path = ::testing::TempDir() + "/graft_cli_json_" +
                     std::to_string(::getpid()) + ".json";
  {
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  const std::string script = path + ".py";
  {
    std::ofstream f(script);
    f << "import json, sys\nd = json.load(open(sys.argv[1]))\n"
      << "sys.exit(0 if (" << condition << ") else 1)\n";
  }
  std::string cmd = "python3 " + ShellQuote(script) + " " + ShellQuote(path);
  bool ok = std::system(cmd.c_str()) == 0;
  std::remove(path.c_str());
  std::remove(script.c_str());
  return ok;
}

// Whether `text` parses as JSON according to python3's json module.
inline bool ParsesAsJson(const std::string& text) {
  return JsonSatisfies(text, "True");
}

// Brackets balance outside strings: a cheap check when python3 is absent.
inline bool Balanced(const std::string& text) {
  std::vector<char> stack;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      stack.push_back(c);
    } else if (c == '}' || c == ']') {
      if (stack.empty() || stack.back() != (c == '}' ? '{' : '[')) return false;
      stack.pop_back();
    }
  }
  return stack.empty() && !in_string;
}

}  // namespace graft::testing

#endif  // GRAFT_TESTS_CLI_CLI_TEST_UTIL_H_
