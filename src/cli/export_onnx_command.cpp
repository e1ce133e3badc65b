// `graphsub export-onnx --model NAME -o out.onnx`: a built-in model as an ONNX file (for
// ONNX Runtime comparisons of the built-in benchmark models); and the short form of the
// ONNX optimize command, `graphsub in.onnx out.onnx`.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/commands.h"
#include "driver/optimize_options.h"
#include "models/models.h"
#include "onnx/onnx_model.h"

namespace graphsub {

namespace {

struct ExportOnnxOptions {
  std::string model, output;
  int64_t opset = 17;
  bool external = false;
};

}  // namespace

void add_export_onnx_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand("export-onnx", "write a built-in model as an ONNX file");
  auto o = std::make_shared<ExportOnnxOptions>();
  cmd->add_option("--model", o->model,
                  fmt::format("built-in model: {}", fmt::join(model_names(), ", ")))
      ->required();
  cmd->add_option("-o,--output", o->output, "the ONNX file to write")->required();
  cmd->add_option("--opset", o->opset, "opset of the written model")
      ->capture_default_str()
      ->check(CLI::Range(kMinConvertedOpset, newest_onnx_opset()));
  cmd->add_flag("--external-data", o->external, "write the weights to OUT.onnx.data");
  cmd->callback([o, &flags] {
    driver::check_writable_file("-o", o->output);
    Graph g = build_model(o->model);
    ExportOptions eo;
    eo.opset = o->opset;
    eo.external_data = o->external;
    export_onnx_file(g, nullptr, o->output, eo);
    if (!flags.quiet)
      fmt::print("wrote {} ({} operators, opset {}), onnx::checker ok\n", o->output, g.num_ops(),
                 o->opset);
  });
}

std::vector<std::string> expand_onnx_short_form(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto is_onnx = [](const std::string& s) {
    return s.size() > 5 && s.compare(s.size() - 5, 5, ".onnx") == 0 && s[0] != '-';
  };
  size_t i = 0;  // global flags (-q) may come first
  while (i < args.size() && (args[i] == "-q" || args[i] == "--quiet")) ++i;
  if (args.size() >= i + 2 && is_onnx(args[i]) && is_onnx(args[i + 1])) {
    std::vector<std::string> expanded(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
    for (const char* s : {"optimize", args[i].c_str(), "-o", args[i + 1].c_str()})
      expanded.emplace_back(s);
    expanded.insert(expanded.end(), args.begin() + static_cast<std::ptrdiff_t>(i + 2), args.end());
    args = std::move(expanded);
  }
  std::reverse(args.begin(), args.end());
  return args;
}

}  // namespace graphsub
