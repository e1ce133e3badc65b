#pragma once
// Each subcommand lives in its own file and registers itself on the app here.
#include <CLI/CLI.hpp>

namespace graphsub {

struct GlobalFlags {
  bool quiet = false;
  int exit_code = 0;  // set by a subcommand that fails without throwing
};

void add_demo_command(CLI::App& app, GlobalFlags& flags);
void add_check_axioms_command(CLI::App& app, GlobalFlags& flags);
void add_verify_command(CLI::App& app, GlobalFlags& flags);
void add_optimize_command(CLI::App& app, GlobalFlags& flags);
void add_generate_command(CLI::App& app, GlobalFlags& flags);

}  // namespace graphsub
