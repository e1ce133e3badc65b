#pragma once
// Each subcommand lives in its own file and registers itself on the app here. A subcommand
// binds its flags to an options struct that its callback owns (no function-static state) and
// runs a job of src/driver.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

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
void add_unfold_command(CLI::App& app, GlobalFlags& flags);
void add_export_onnx_command(CLI::App& app, GlobalFlags& flags);

// `graphsub in.onnx out.onnx [flags]` becomes `graphsub optimize in.onnx -o out.onnx [flags]`;
// any other command line is returned unchanged. The result is in CLI11's order for
// App::parse(std::vector<std::string>&) (reversed, program name dropped).
std::vector<std::string> expand_onnx_short_form(int argc, char** argv);

}  // namespace graphsub
