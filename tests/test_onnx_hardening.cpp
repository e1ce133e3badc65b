// Hostile and careless files (issue 20): windowed operators with zero strides, external data
// that escapes the model's folder or is not a file, writes that fail half-way or would
// replace the input, element counts that overflow or exceed the limits, and inputs that are
// not regular files or are too large. Each must end in an Error naming the problem.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/tensor_type.h"
#include "exec/host_tensor.h"
#include "exec/reference_executor.h"
#include "ir/builder.h"
#include "onnx/onnx_model.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

namespace fs = std::filesystem;
using testing::OnnxBuilder;
using testing::scratch_dir;

// The message of the Error `f` throws ("" and a test failure when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

std::string import_error(const OnnxBuilder& b, ImportOptions opts = {}) {
  return error_of([&] { import_onnx_bytes(b.bytes(), "", opts); });
}

// A fresh, empty folder under the build tree.
std::string fresh_dir(const std::string& name) {
  std::string d = scratch_dir("hardening/" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

OnnxBuilder pool_model(const std::string& op, std::vector<int64_t> strides, int64_t ceil_mode,
                       std::vector<int64_t> kernel = {2, 2}) {
  OnnxBuilder b;
  b.input("x", {1, 2, 6, 6});
  auto& n = b.node(op, {"x"}, {"y"}, "pool1");
  OnnxBuilder::attr(n, "kernel_shape", kernel);
  OnnxBuilder::attr(n, "strides", strides);
  if (ceil_mode) OnnxBuilder::attr(n, "ceil_mode", ceil_mode);
  b.output_untyped("y");
  return b;
}

// y = Relu(x) for an input x of the given shape.
OnnxBuilder relu_of(const Shape& shape) {
  OnnxBuilder b;
  b.input("x", shape);
  b.node("Relu", {"x"}, {"y"});
  b.output_untyped("y");
  return b;
}

OnnxBuilder relu_model() {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.init("w", {2, 3});
  b.node("Add", {"x", "w"}, {"a"});
  b.node("Relu", {"a"}, {"y"});
  b.output("y", {2, 3});
  return b;
}

// ---- 1. windowed operators: zero strides, dilations, kernels; negative pads ----

TEST(OnnxHardening, PoolWithZeroStridesIsAnErrorNotACrash) {
  for (const char* op : {"MaxPool", "AveragePool"})
    for (int64_t ceil : {0, 1}) {
      std::string e = import_error(pool_model(op, {0, 0}, ceil));
      EXPECT_HAS(e, "pool1");
      EXPECT_HAS(e, "strides");
    }
}

TEST(OnnxHardening, PoolWithZeroKernelOrNegativePadsIsAnError) {
  std::string e = import_error(pool_model("MaxPool", {1, 1}, 1, {0, 2}));
  EXPECT_HAS(e, "pool1");
  EXPECT_HAS(e, "kernel_shape");
  OnnxBuilder b = pool_model("AveragePool", {1, 1}, 0);
  OnnxBuilder::attr(*b.g().mutable_node(0), "pads", std::vector<int64_t>{-1, 0, 0, 0});
  e = import_error(b);
  EXPECT_HAS(e, "pool1");
  EXPECT_HAS(e, "pads");
  OnnxBuilder d = pool_model("MaxPool", {1, 1}, 0);
  OnnxBuilder::attr(*d.g().mutable_node(0), "dilations", std::vector<int64_t>{0, 1});
  e = import_error(d);
  EXPECT_HAS(e, "pool1");
  EXPECT_HAS(e, "dilations");
}

OnnxBuilder conv_model(const std::string& attr, std::vector<int64_t> value,
                       const std::string& auto_pad = "", Shape w = {2, 2, 3, 3}) {
  OnnxBuilder b;
  b.input("x", {1, 2, 6, 6});
  b.init("w", w);
  auto& n = b.node("Conv", {"x", "w"}, {"y"}, "conv1");
  OnnxBuilder::attr(n, attr, value);
  if (!auto_pad.empty()) OnnxBuilder::attr(n, "auto_pad", auto_pad);
  b.output_untyped("y");
  return b;
}

TEST(OnnxHardening, ConvWithZeroStridesOrDilationsIsAnError) {
  for (const char* pad : {"", "SAME_UPPER"}) {
    std::string e = import_error(conv_model("strides", {0, 1}, pad));
    EXPECT_HAS(e, "conv1");
    EXPECT_HAS(e, "strides");
    e = import_error(conv_model("dilations", {1, 0}, pad));
    EXPECT_HAS(e, "conv1");
    EXPECT_HAS(e, "dilations");
  }
  // Huge values cannot overflow the output-size arithmetic either.
  std::string e = import_error(conv_model("strides", {int64_t{1} << 62, 1}, "SAME_LOWER"));
  EXPECT_HAS(e, "strides");
  e = import_error(conv_model("dilations", {int64_t{1} << 62, 1}));
  EXPECT_HAS(e, "dilations");
}

TEST(OnnxHardening, OpaqueWindowedOperatorsAreCheckedToo) {
  // ConvTranspose stays opaque, but ONNX shape inference divides by its strides as well.
  OnnxBuilder b;
  b.input("x", {1, 2, 4, 4});
  b.init("w", {2, 2, 3, 3});
  auto& n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "deconv1");
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{0, 0});
  b.output_untyped("y");
  std::string e = import_error(b);
  EXPECT_HAS(e, "deconv1");
  EXPECT_HAS(e, "strides");
}

TEST(OnnxHardening, ConvWithAnEmptyWeightIsAnError) {
  std::string e = import_error(conv_model("strides", {1, 1}, "", {2, 0, 3, 3}));
  EXPECT_HAS(e, "conv1");
  e = import_error(conv_model("strides", {1, 1}, "", {2, 2, 0, 3}));
  EXPECT_HAS(e, "conv1");
}

TEST(OnnxHardening, WindowArithmeticInTheOperatorsIsChecked) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 6, 6});
  auto w = b.weight("w", {2, 2, 3, 3});
  std::string e = error_of([&] {
    b.op("conv", {x, w},
         {{"stride", std::vector<int64_t>{1, 1}},
          {"pads", std::vector<int64_t>{0, 0, 0, 0}},
          {"dilations", std::vector<int64_t>{int64_t{1} << 62, 1}}});
  });
  EXPECT_HAS(e, "out of range");
  e = error_of([&] {
    b.op("poolmax", {x},
         {{"kernel", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{0, 1}}});
  });
  EXPECT_HAS(e, "stride");
}

// ---- 4. element counts ----

TEST(OnnxHardening, CheckedArithmetic) {
  EXPECT_EQ(checked_mul(1 << 20, 1 << 20), int64_t{1} << 40);
  EXPECT_FALSE(checked_mul(int64_t{1} << 31, int64_t{1} << 30));  // 2^61 > 2^60
  EXPECT_FALSE(checked_mul(int64_t{1} << 62, 4));                 // wraps to 0 unchecked
  EXPECT_FALSE(checked_mul(-1, 2));
  EXPECT_EQ(checked_add(kMaxElements - 1, 1), kMaxElements);
  EXPECT_FALSE(checked_add(kMaxElements, 1));
  EXPECT_EQ(checked_numel({2, 0, 3}), 0);
  EXPECT_FALSE(checked_numel({int64_t{1} << 62, 4}));
  EXPECT_FALSE(checked_numel({7, 7905747460161236407}));  // wraps to 1 unchecked
  // A zero dimension does not hide an overflowing product of the others: kernels form the
  // partial products.
  EXPECT_FALSE(checked_numel({0, int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_HAS(error_of([] { numel({int64_t{1} << 62, 4}); }), "[4611686018427387904,4]");
}

TEST(OnnxHardening, InputsWhoseElementCountOverflowsAreErrors) {
  for (Shape s : {Shape{int64_t{1} << 62, 4}, Shape{7, 7905747460161236407}}) {
    std::string e = import_error(relu_of(s));
    EXPECT_HAS(e, "graph input 'x'");
    EXPECT_HAS(e, "limit");
  }
}

TEST(OnnxHardening, AnInitializerWithHugeDimsAndNoDataIsAnError) {
  OnnxBuilder b;
  b.input("x", {4});
  auto* t = b.g().add_initializer();
  t->set_name("huge");
  t->set_data_type(1);
  t->add_dims(int64_t{1} << 62);
  b.node("Add", {"x", "huge"}, {"y"});
  b.output_untyped("y");
  std::string e = import_error(b);
  EXPECT_HAS(e, "initializer 'huge'");
  EXPECT_HAS(e, "limit");
  // Below 2^60 but above the per-tensor limit: refused before its (absent) data is read.
  b.g().mutable_initializer(0)->set_dims(0, int64_t{1} << 40);
  e = import_error(b);
  EXPECT_HAS(e, "initializer 'huge'");
  EXPECT_HAS(e, "max_tensor_elements");
}

TEST(OnnxHardening, ATinyModelDeclaringAHugeInputFailsBeforeAllocating) {
  OnnxBuilder b = relu_of({int64_t{1} << 31, 1});
  ASSERT_LT(b.bytes().size(), 200u);
  std::string e = import_error(b);
  EXPECT_HAS(e, "graph input 'x'");
  EXPECT_HAS(e, "max_tensor_elements");
  EXPECT_HAS(e, "1073741824");
  // The limit is an option.
  ImportOptions small;
  small.max_tensor_elements = 100;
  EXPECT_HAS(import_error(relu_of({11, 10}), small), "110 elements");
  // So is the total: two tensors of 400 bytes each pass 512 bytes together.
  ImportOptions total;
  total.max_total_bytes = 512;
  e = import_error(relu_of({10, 10}), total);
  EXPECT_HAS(e, "max_total_bytes");
  EXPECT_HAS(e, "'y'");
}

TEST(OnnxHardening, EmptyTensorsRunWithoutDividingByZero) {
  // x @ w[3,0] is empty: Softmax, LayerNormalization, ReduceMean and MatMul after it died of
  // SIGFPE in the reference kernels (the result check of graphsub optimize).
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto e = b.matmul(x, b.weight("w", {3, 0}));
  b.output("softmax", b.softmax(e, 1));
  b.output("layernorm", b.op("layernorm", {e, b.weight("s", {0})}, {{"axis", int64_t{1}}}));
  b.output("mean", b.op("reduce_mean", {e}, {{"axes", std::vector<int64_t>{1}}}));
  b.output("matmul", b.matmul(e, b.weight("v", {0, 4})));  // k = 0: zeros, 2 x 4
  b.output("pad", b.op("pad", {e}, {{"pads", std::vector<int64_t>{0, 1, 0, 1}}}));
  Graph g = b.finish();
  auto out = run_reference<float>(g, random_feeds(g, 1));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].shape, (Shape{2, 0}));
  EXPECT_EQ(out[2].shape, (Shape{2, 1}));
  EXPECT_TRUE(std::isnan(out[2].data[0]));  // the mean of nothing
  EXPECT_EQ(out[3].data, std::vector<float>(8, 0.f));
  EXPECT_EQ(out[4].data, std::vector<float>(4, 0.f));
}

TEST(OnnxHardening, ReshapeToAnOverflowingShapeIsAnError) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.init_ints("s", {int64_t{1} << 40, int64_t{1} << 40});
  b.node("Reshape", {"x", "s"}, {"y"}, "reshape1");
  b.output_untyped("y");
  std::string e = import_error(b);
  EXPECT_HAS(e, "reshape1");
}

TEST(OnnxHardening, ResizeScalesWithNoRepresentableSizeAreAnError) {
  // Found by fuzzing: a scale of 1e38 turned into an int64 size (undefined behaviour).
  for (float scale : {1e38f, -4.f, std::nanf("")}) {
    OnnxBuilder b;
    b.input("x", {1, 2, 4, 4});
    b.init_floats("roi", {});
    b.init_floats("scales", {1, 1, scale, 2});
    b.node("Resize", {"x", "roi", "scales"}, {"y"}, "resize1");
    b.output_untyped("y");
    std::string e = import_error(b);
    EXPECT_HAS(e, "resize1");
    EXPECT_HAS(e, "outside [1, 2^40]");
  }
}

TEST(OnnxHardening, ASliceStepLongerThanTheAxisReadsOneElement) {
  // Found by fuzzing: a step near 2^62 overflowed step * stride in the kernel.
  GraphBuilder b;
  auto x = b.input("x", {2, 6});
  b.output("y", b.op("slice", {x},
                     {{"starts", std::vector<int64_t>{1}},
                      {"ends", std::vector<int64_t>{6}},
                      {"axes", std::vector<int64_t>{1}},
                      {"steps", std::vector<int64_t>{int64_t{7094703680391311873}}}}));
  b.output("z", b.op("slice", {x},
                     {{"starts", std::vector<int64_t>{5}},
                      {"ends", std::vector<int64_t>{-7}},
                      {"axes", std::vector<int64_t>{1}},
                      {"steps", std::vector<int64_t>{std::numeric_limits<int64_t>::min()}}}));
  Graph g = b.finish();
  auto feeds = random_feeds(g, 1);
  auto out = run_reference<float>(g, feeds);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].shape, (Shape{2, 1}));
  ASSERT_EQ(out[1].shape, (Shape{2, 1}));
  const auto& in = feeds.begin()->second.data;
  EXPECT_EQ(out[0].data, (std::vector<float>{in[1], in[7]}));
  EXPECT_EQ(out[1].data, (std::vector<float>{in[5], in[11]}));
}

// ---- 2. external data ----

// A model whose initializer 'w' [4,3] is stored externally at `location`.
OnnxBuilder external_model(const std::string& location, int64_t offset = 0, int64_t length = 48) {
  OnnxBuilder b;
  b.input("x", {2, 4});
  auto* t = b.g().add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(4);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  if (length >= 0) kv("length", std::to_string(length));
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output_untyped("y");
  return b;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(OnnxHardening, ExternalDataInsideTheFolderIsRead) {
  std::string d = fresh_dir("ext_ok");
  write_file(d + "/w.bin", std::string(96, '\0'));
  fs::create_directories(d + "/sub");
  fs::create_symlink("../w.bin", d + "/sub/link.bin");  // a link that stays inside
  for (std::string loc : {"w.bin", "sub/link.bin"}) {
    std::string model = external_model(loc, 48).save(d + "/m.onnx");
    ImportedModel m = import_onnx_file(model);
    EXPECT_EQ(m.graph.num_ops(), 1u) << loc;
  }
  // Without a length the shape says how many bytes to read.
  ImportedModel m = import_onnx_file(external_model("w.bin", 0, -1).save(d + "/m.onnx"));
  EXPECT_EQ(m.graph.num_ops(), 1u);
}

TEST(OnnxHardening, ExternalDataThroughASymlinkOutsideTheFolderIsRefused) {
  std::string d = fresh_dir("ext_link");
  std::string secret = scratch_dir("hardening") + "/secret.bin";
  write_file(secret, std::string(48, 'S'));
  fs::create_symlink(secret, d + "/link.bin");
  fs::create_directory_symlink(scratch_dir("hardening"), d + "/up");  // a folder link
  for (std::string loc : {"link.bin", "up/secret.bin"}) {
    std::string model = external_model(loc).save(d + "/m.onnx");
    std::string e = error_of([&] { import_onnx_file(model); });
    EXPECT_HAS(e, "initializer 'w'");
    EXPECT_HAS(e, loc);
    EXPECT_HAS(e, "outside the model's folder");
  }
}

TEST(OnnxHardening, ExternalDataThatIsNotARegularFileIsRefusedWithoutBlocking) {
  std::string d = fresh_dir("ext_special");
  ASSERT_EQ(::mkfifo((d + "/fifo.bin").c_str(), 0600), 0);
  fs::create_directories(d + "/dir.bin");
  for (auto [loc, kind] : {std::pair{"fifo.bin", "FIFO"}, std::pair{"dir.bin", "directory"}}) {
    std::string model = external_model(loc).save(d + "/m.onnx");
    std::string e = error_of([&] { import_onnx_file(model); });
    EXPECT_HAS(e, "initializer 'w'");
    EXPECT_HAS(e, kind);
  }
}

TEST(OnnxHardening, ExternalDataRangesAreCheckedWithoutOverflow) {
  std::string d = fresh_dir("ext_range");
  write_file(d + "/w.bin", std::string(96, '\0'));
  struct Case {
    int64_t offset, length;
    const char* says;
  };
  for (Case c : {Case{60, 48, "outside"}, Case{9223372036854775800, 48, "outside"},
                 Case{0, 40, "does not match its shape"}, Case{-8, 48, "negative"},
                 Case{0, 9223372036854775807, "does not match its shape"}}) {
    std::string model = external_model("w.bin", c.offset, c.length).save(d + "/m.onnx");
    std::string e = error_of([&] { import_onnx_file(model); });
    EXPECT_HAS(e, "initializer 'w'");
    EXPECT_HAS(e, c.says);
  }
}

// ---- 5. input files: size and kind checked before reading ----

TEST(OnnxHardening, InputsThatAreNotRegularFilesAreRefusedWithoutReading) {
  std::string d = fresh_dir("special_inputs");
  ASSERT_EQ(::mkfifo((d + "/fifo.onnx").c_str(), 0600), 0);
  EXPECT_HAS(error_of([&] { import_onnx_file(d + "/fifo.onnx"); }), "FIFO");
  EXPECT_HAS(error_of([&] { import_onnx_file("/dev/zero"); }), "character device");
  EXPECT_HAS(error_of([&] { import_onnx_file(d); }), "directory");
}

TEST(OnnxHardening, AFileOverTheSizeLimitIsRefusedByItsSize) {
  std::string d = fresh_dir("big_input");
  std::string path = d + "/big.onnx";
  { std::ofstream(path, std::ios::binary) << "x"; }
  fs::resize_file(path, int64_t{3} << 30);  // sparse: 3 GiB that take no disk
  std::string e = error_of([&] { import_onnx_file(path); });
  EXPECT_HAS(e, "3221225472 bytes");
  EXPECT_HAS(e, "2 GiB");
  fs::remove(path);
  // The limit is an option.
  std::string small = relu_model().save(d + "/small.onnx");
  ImportOptions o;
  o.max_file_bytes = 10;
  EXPECT_HAS(error_of([&] { import_onnx_file(small, o); }), "over the limit of 10 bytes");
}

// ---- 3. writes: never onto the input, never half a file ----

TEST(OnnxHardening, TheOutputIsComparedWithTheInputAsAFile) {
  std::string d = fresh_dir("same_file");
  std::string in = relu_model().save(d + "/a.onnx");
  fs::create_symlink("a.onnx", d + "/link.onnx");
  fs::create_hard_link(in, d + "/hard.onnx");
  std::string cwd_relative = fs::relative(in, fs::current_path()).string();
  for (std::string out : {in, fs::absolute(in).string(), d + "/./a.onnx", d + "/link.onnx",
                          d + "/hard.onnx", "./" + cwd_relative})
    EXPECT_HAS(error_of([&] { ensure_output_is_not_input(in, out); }), "same file") << out;
  // The sidecar counts too: writing b.onnx would replace b.onnx.data.
  fs::create_symlink("a.onnx", d + "/b.onnx.data");
  EXPECT_HAS(error_of([&] { ensure_output_is_not_input(in, d + "/b.onnx"); }), "b.onnx.data");
  EXPECT_NO_THROW(ensure_output_is_not_input(in, d + "/new.onnx"));
}

TEST(OnnxHardening, TheWriterRefusesToReplaceTheFilesTheModelCameFrom) {
  std::string d = fresh_dir("writer_protects");
  std::string in = relu_model().save(d + "/a.onnx");
  std::string before = read_all(in);
  ImportedModel m = import_onnx_file(in);
  fs::create_symlink("a.onnx", d + "/link.onnx");
  for (std::string out : {in, d + "/link.onnx", d + "/../writer_protects/a.onnx"}) {
    std::string e = error_of([&] { export_onnx_file(m.graph, m.info.get(), out); });
    EXPECT_HAS(e, "refusing to write");
  }
  EXPECT_EQ(read_all(in), before);
  // A model with external data: its data file is protected as well.
  write_file(d + "/w.bin", std::string(48, '\0'));
  std::string ext = external_model("w.bin").save(d + "/e.onnx");
  ImportedModel me = import_onnx_file(ext);
  fs::create_symlink("w.bin", d + "/out.onnx.data");
  ExportOptions eo;
  eo.external_data = true;
  EXPECT_HAS(error_of([&] { export_onnx_file(me.graph, me.info.get(), d + "/out.onnx", eo); }),
             "w.bin");
  EXPECT_EQ(read_all(d + "/w.bin"), std::string(48, '\0'));
}

// Files in `dir` other than `keep`: what a failed write must not leave behind.
std::vector<std::string> leftovers(const std::string& dir, const std::set<std::string>& keep) {
  std::vector<std::string> extra;
  for (const auto& e : fs::directory_iterator(dir))
    if (!keep.count(e.path().filename().string())) extra.push_back(e.path().filename().string());
  return extra;
}

// Runs `f` in a child process whose file-size limit is `limit` bytes; returns the child's
// exit status: 0 when f threw an Error that names EFBIG's reason, 1 when it threw none.
template <class F>
int with_file_size_limit(rlim_t limit, F&& f) {
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit rl {
      limit, limit
    };
    setrlimit(RLIMIT_FSIZE, &rl);
    int code = 1;
    try {
      f();
    } catch (const Error& e) {
      code = std::string(e.what()).find("File too large") != std::string::npos ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

Graph large_graph() {
  GraphBuilder b;
  auto x = b.input("x", {1, 64});
  b.output("y", b.matmul(x, b.weight("w", {64, 256})));  // 64 KiB of weights
  return b.finish();
}

TEST(OnnxHardening, AWriteThatFailsLeavesTheOldFileAndNoPartialFile) {
  std::string d = fresh_dir("failed_write");
  std::string out = d + "/out.onnx";
  write_file(out, "old model");
  Graph g = large_graph();
  // SIGXFSZ is ignored by the writer, so the write fails with EFBIG instead of killing it.
  EXPECT_EQ(with_file_size_limit(16384, [&] { export_onnx_file(g, nullptr, out); }), 0);
  EXPECT_EQ(read_all(out), "old model");
  EXPECT_EQ(leftovers(d, {"out.onnx"}), std::vector<std::string>{});
  // The same with external data: the sidecar fails first, neither file is replaced.
  write_file(out + ".data", "old data");
  ExportOptions eo;
  eo.external_data = true;
  EXPECT_EQ(with_file_size_limit(16384, [&] { export_onnx_file(g, nullptr, out, eo); }), 0);
  EXPECT_EQ(read_all(out), "old model");
  EXPECT_EQ(read_all(out + ".data"), "old data");
  EXPECT_EQ(leftovers(d, {"out.onnx", "out.onnx.data"}), std::vector<std::string>{});
  // Without a limit the same write succeeds and replaces both.
  export_onnx_file(g, nullptr, out, eo);
  EXPECT_GE(fs::file_size(out + ".data"), 65536u);
  EXPECT_NO_THROW(import_onnx_file(out));
  EXPECT_EQ(leftovers(d, {"out.onnx", "out.onnx.data"}), std::vector<std::string>{});
}

TEST(OnnxHardening, AnUnwritableFolderIsAnErrorWithTheReason) {
  std::string e =
      error_of([&] { export_onnx_file(large_graph(), nullptr, "/nonexistent-folder/out.onnx"); });
  EXPECT_HAS(e, "/nonexistent-folder/out.onnx");
  EXPECT_HAS(e, "No such file or directory");
}

}  // namespace
}  // namespace graphsub
