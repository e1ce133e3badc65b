#include <fmt/format.h>

#include "core/error.h"
#include "models/models.h"

namespace graphsub {

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"resnet50",   "resnext50", "nasnet_a",
                                                 "nasrnn",     "bert",      "inception_v3",
                                                 "squeezenet", "vgg19",     "demo"};
  return names;
}

Graph build_model(std::string_view name, bool with_data) {
  if (name == "resnet50") return resnet50(with_data);
  if (name == "resnext50") return resnext50(with_data);
  if (name == "nasnet_a") return nasnet_a(with_data);
  if (name == "nasrnn") return nasrnn(with_data);
  if (name == "bert") return bert(with_data);
  if (name == "inception_v3") return inception_v3(with_data);
  if (name == "squeezenet") return squeezenet(with_data);
  if (name == "vgg19") return vgg19(with_data);
  if (name == "demo") return demo_model(with_data);
  throw Error(
      fmt::format("unknown model '{}'; known models: {}", name, fmt::join(model_names(), ", ")));
}

}  // namespace graphsub
