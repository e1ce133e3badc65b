// The importer on the fuzzing corpus (fuzz/corpus: seeds and inputs that once failed) and on
// deterministic mutations of it: every input imports (and exports) or fails with
// graphsub::Error. Runs in every build, sanitizers included; fuzz/run_fuzz.sh explores further
// with libFuzzer.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "fuzz/fuzz_harness.h"
#include "onnx/onnx_model.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(GRAPHSUB_SOURCE_DIR) / "fuzz" / "corpus"))
    if (e.is_regular_file()) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// true: imported and exported; false: a graphsub::Error. Anything else fails the test.
bool try_import(const std::string& bytes) {
  try {
    ImportedModel m = import_onnx_bytes(bytes, "");
    export_onnx_bytes(m.graph, m.info.get());
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(OnnxFuzzCorpus, SeedsImport) {
  auto files = corpus();
  ASSERT_GE(files.size(), 5u);
  size_t ok = 0;
  for (const auto& f : files) ok += try_import(read(f));
  EXPECT_GE(ok, 5u);  // the seeds are valid models
}

// The whole fuzz harness (import, optimize, check, export; external data in a scratch
// folder with hostile neighbours) on every seed: what libFuzzer starts from works here.
TEST(OnnxFuzzCorpus, SeedsPassTheFuzzHarness) {
  size_t imported = 0, external = 0, external_imported = 0;
  for (const auto& f : corpus()) {
    std::string bytes = read(f);
    bool ext = bytes.rfind(fuzz::kExternalMagic, 0) == 0;
    bool ok = fuzz::run_one_input(bytes);
    imported += ok;
    external += ext;
    external_imported += ext && ok;
  }
  // One seed per converted operator (fuzz/make_seeds.py) and the older seeds: most import.
  EXPECT_GE(imported, 40u);
  // External data: the good locations import, the hostile ones (a link outside, a FIFO, a
  // folder, "..", ranges past the end) are refused.
  EXPECT_GE(external, 8u);
  EXPECT_EQ(external_imported, 3u);
}

TEST(OnnxFuzzCorpus, MutationsFailCleanly) {
  int per_file = testing::sanitized() ? 40 : 150;
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  size_t imported = 0, failed = 0;
  for (const auto& f : corpus()) {
    std::string seed = read(f);
    if (seed.empty()) continue;
    for (int i = 0; i < per_file; ++i) {
      std::string m = seed;
      int edits = 1 + static_cast<int>(next() % 4);
      for (int e = 0; e < edits; ++e) {
        size_t pos = next() % m.size();
        switch (next() % 4) {
          case 0:
            m[pos] = static_cast<char>(next());
            break;  // overwrite
          case 1:
            m[pos] = static_cast<char>(m[pos] ^ (1 << (next() % 8)));
            break;  // bit flip
          case 2:
            m.insert(pos, 1, static_cast<char>(next()));
            break;  // insert
          default:
            m.resize(std::max<size_t>(1, pos));
            break;  // truncate
        }
      }
      (try_import(m) ? imported : failed)++;
    }
  }
  EXPECT_GT(failed, 0u);
  EXPECT_GT(imported + failed, 0u);
}

}  // namespace
}  // namespace graphsub
