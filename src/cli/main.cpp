// graphsub command line: parses flags and dispatches to one subcommand.
#include <fmt/format.h>

#include <new>

#include "cli/commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"graphsub: a superoptimizer for deep-learning computation graphs"};
  app.require_subcommand(1);
  graphsub::GlobalFlags flags;
  app.add_flag("-q,--quiet", flags.quiet, "no progress lines or informational output");
  // A flag a subcommand does not know is tried on the app: -q also after the subcommand.
  app.fallthrough();
  graphsub::add_demo_command(app, flags);
  graphsub::add_check_axioms_command(app, flags);
  graphsub::add_verify_command(app, flags);
  graphsub::add_optimize_command(app, flags);
  graphsub::add_export_onnx_command(app, flags);
  graphsub::add_generate_command(app, flags);
  graphsub::add_unfold_command(app, flags);
  try {
    auto args = graphsub::expand_onnx_short_form(argc, argv);  // `graphsub in.onnx out.onnx`
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const graphsub::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr,
               "error: out of memory (the machine's memory or this process's limit ran out); "
               "`generate`: lower --max-ops or restrict --ops/--params; `optimize`: lower "
               "--budget or --max-queue\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return 2;
  }
  return flags.exit_code;
}
