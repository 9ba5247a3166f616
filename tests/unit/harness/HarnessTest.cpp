//===- HarnessTest.cpp - The training executable's harness, end to end ----===//
//
// Runs harness-linear-train (LinearProgram.cpp: a hand-written program linked
// like generated code) as a subprocess in a scratch directory with the
// flags a user would pass, and checks what it prints and writes against a
// float64 recomputation of the same SGD steps done here. A few error paths
// that need a special program (a failing step, an inconsistent layout) call
// harnessMain in-process.
//
//===----------------------------------------------------------------------===//

#include "LinearModel.h"
#include "MiniJson.h"

#include "remat/runtime/Kernels.h"
#include "remat/runtime/Program.h"
#include "remat/runtime/TensorProtoIO.h"

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
namespace rt = remat::rt;
using namespace remat::test;
namespace json = remat::test::json;

namespace {

//===----------------------------------------------------------------------===//
// Data, model files and the float64 reference
//===----------------------------------------------------------------------===//

struct Batch {
  std::vector<float> x; // [kBatch, kFeatures]
  std::vector<float> y; // [kBatch]
};

/// A reproducible batch: y depends linearly on x plus a little noise, so the
/// loss has somewhere to go.
Batch makeBatch(unsigned seed) {
  Batch b;
  uint64_t state = 0x1234567 + seed * 7919;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53 - 0.5; // [-0.5, 0.5)
  };
  const double truth[kFeatures] = {0.5, -1.0, 2.0, 0.25};
  for (int64_t n = 0; n < kBatch; ++n) {
    double target = 0.1 * next();
    for (int64_t f = 0; f < kFeatures; ++f) {
      const float x = static_cast<float>(2 * next());
      b.x.push_back(x);
      target += truth[f] * x;
    }
    b.y.push_back(static_cast<float>(target));
  }
  return b;
}

const std::vector<float> kInitialW = {0.1f, 0.2f, -0.3f, 0.05f};
constexpr float kInitialRunningVar = 2.0f;

void writeBatch(const fs::path &dir, const Batch &b) {
  fs::create_directories(dir);
  rt::writeTensorFile((dir / "input_0.pb").string(),
                      rt::TensorView(rt::DType::F32, {kBatch, kFeatures},
                                     const_cast<float *>(b.x.data())),
                      "x");
  rt::writeTensorFile((dir / "input_1.pb").string(),
                      rt::TensorView(rt::DType::F32, {kBatch, 1},
                                     const_cast<float *>(b.y.data())),
                      "y");
}

void addValueInfo(onnx::ValueInfoProto *info, const std::string &name,
                  const std::vector<int64_t> &dims) {
  info->set_name(name);
  auto *tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

/// pred = MatMul(x, w) with w and running_var initializers (omitted when
/// `withWeights` is false); `externalData` stores w in `<model>.data` next
/// to the model.
void writeModel(const fs::path &path, std::vector<float> w,
                std::vector<int64_t> wShape = {kFeatures, 1},
                bool withWeights = true, bool externalData = false) {
  fs::create_directories(path.parent_path());
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("remat harness test");
  auto *opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto *graph = model.mutable_graph();
  graph->set_name("linear");
  addValueInfo(graph->add_input(), "x", {kBatch, kFeatures});
  if (withWeights) {
    float runningVar = kInitialRunningVar;
    rt::tensorToProto(rt::TensorView(rt::DType::F32, {1}, &runningVar),
                      "running_var", *graph->add_initializer());
    onnx::TensorProto *init = graph->add_initializer();
    rt::tensorToProto(rt::TensorView(rt::DType::F32, wShape, w.data()), "w",
                      *init);
    if (externalData) {
      const std::string dataFile = path.filename().string() + ".data";
      std::ofstream(path.parent_path() / dataFile, std::ios::binary)
          .write(init->raw_data().data(), init->raw_data().size());
      init->clear_raw_data();
      init->set_data_location(onnx::TensorProto::EXTERNAL);
      auto *location = init->add_external_data();
      location->set_key("location");
      location->set_value(dataFile);
    }
  } else {
    addValueInfo(graph->add_input(), "w", wShape);
  }
  onnx::NodeProto *node = graph->add_node();
  node->set_op_type("MatMul");
  node->add_input("x");
  node->add_input("w");
  node->add_output("pred");
  addValueInfo(graph->add_output(), "pred", {kBatch, wShape.back()});
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out));
}

/// The losses of `steps` SGD steps in float64 from `w` (updated), step i
/// using batches[i % size]; `runningVar` (if given) is updated like the
/// program's buffer.
std::vector<double> referenceLosses(const std::vector<Batch> &batches,
                                    std::vector<double> &w, int steps,
                                    double *runningVar = nullptr) {
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    const Batch &b = batches[s % batches.size()];
    std::vector<double> diff(kBatch);
    double loss = 0;
    for (int64_t n = 0; n < kBatch; ++n) {
      double pred = 0;
      for (int64_t f = 0; f < kFeatures; ++f)
        pred += double(b.x[n * kFeatures + f]) * w[f];
      diff[n] = pred - b.y[n];
      loss += diff[n] * diff[n];
    }
    losses.push_back(loss / kBatch);
    if (runningVar)
      *runningVar = kDecay * *runningVar + (1 - kDecay) * losses.back();
    for (int64_t f = 0; f < kFeatures; ++f) {
      double grad = 0;
      for (int64_t n = 0; n < kBatch; ++n)
        grad += 2.0 / kBatch * diff[n] * b.x[n * kFeatures + f];
      w[f] -= kLearningRate * grad;
    }
  }
  return losses;
}

std::vector<double> initialW() {
  return std::vector<double>(kInitialW.begin(), kInitialW.end());
}

//===----------------------------------------------------------------------===//
// Running the executable
//===----------------------------------------------------------------------===//

struct RunResult {
  int status = -1;
  std::string out, err;
  /// `step i/N loss V (T ms)` lines, in order.
  std::vector<double> losses;
};

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class HarnessTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("remat-harness-" + std::string(info->name()) + "-" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure())
      fs::remove_all(dir_);
  }

  /// Runs the program in dir_ (so that its default model path,
  /// "linear.onnx", is dir_/linear.onnx) with `args`.
  RunResult run(const std::string &args) {
    const std::string command = "cd '" + dir_.string() + "' && '" +
                                std::string(HARNESS_LINEAR_EXE) + "' " + args +
                                " > stdout.txt 2> stderr.txt";
    RunResult r;
    const int raw = std::system(command.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = readFile(dir_ / "stdout.txt");
    r.err = readFile(dir_ / "stderr.txt");
    std::istringstream lines(r.out);
    const std::regex step(R"(^step (\d+)/(\d+) loss (\S+) \(([0-9.]+) ms\)$)");
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_match(line, m, step))
        r.losses.push_back(std::stod(m[3]));
    }
    return r;
  }

  fs::path dir_;
};

/// The --json object, or a test failure.
json::Value parseJson(const std::string &text) {
  try {
    json::Value value = json::parse(text);
    EXPECT_EQ(value.kind, json::Value::Object) << text;
    return value;
  } catch (const std::exception &e) {
    ADD_FAILURE() << e.what() << "\n" << text;
    return {};
  }
}

double number(const json::Value &object, const char *key) {
  const json::Value *v = object.get(key);
  EXPECT_TRUE(v && v->kind == json::Value::Number) << key;
  return v && v->kind == json::Value::Number ? v->number : NAN;
}

std::string string(const json::Value &object, const char *key) {
  const json::Value *v = object.get(key);
  EXPECT_TRUE(v && v->kind == json::Value::String) << key;
  return v ? v->string : "";
}

std::vector<double> numbers(const json::Value &object, const char *key) {
  std::vector<double> out;
  const json::Value *v = object.get(key);
  EXPECT_TRUE(v && v->kind == json::Value::Array) << key;
  if (v)
    for (const json::Value &item : v->array)
      out.push_back(item.kind == json::Value::Number ? item.number : NAN);
  return out;
}

std::string describe(const RunResult &r) {
  return "exit " + std::to_string(r.status) + "\n--- stdout\n" + r.out +
         "--- stderr\n" + r.err;
}

//===----------------------------------------------------------------------===//
// Training, against the float64 reference
//===----------------------------------------------------------------------===//

TEST_F(HarnessTest, InputsTrainLikeFloat64AndWeightsRoundTrip) {
  const Batch batch = makeBatch(0);
  writeBatch(dir_ / "batch", batch);
  writeModel(dir_ / "model" / "linear.onnx", kInitialW);

  RunResult r = run("--steps 5 --inputs batch --weights model/linear.onnx "
                    "--dump-params dump --dump-buffers buffers "
                    "--save-weights out/trained.onnx");
  ASSERT_EQ(r.status, 0) << describe(r);
  std::vector<double> w = initialW();
  const std::vector<double> want = referenceLosses({batch}, w, 6);
  ASSERT_EQ(r.losses.size(), 5u) << describe(r);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(r.losses[i], want[i], 2e-6) << "step " << i + 1;
    if (i) {
      EXPECT_LT(r.losses[i], r.losses[i - 1]) << "step " << i + 1;
    }
  }
  EXPECT_NE(r.out.find("trained 5 steps (sgd, hand-written plan) on cpu"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("weights written to out/trained.onnx"),
            std::string::npos);

  // --dump-params: remat-run's layout, the trained w.
  rt::Tensor dumped = rt::readTensorFile((dir_ / "dump" / "w.pb").string());
  ASSERT_EQ(dumped.shape(), (rt::Shape{kFeatures, 1}));
  ASSERT_EQ(dumped.dtype(), rt::DType::F32);
  std::vector<double> w5 = initialW();
  double runningVar = kInitialRunningVar;
  referenceLosses({batch}, w5, 5, &runningVar);
  for (int64_t f = 0; f < kFeatures; ++f)
    EXPECT_NEAR(dumped.as<float>()[f], w5[f], 1e-5 * std::max(1.0, w5[f]));
  // Parameters only (remat-run --check-params accepts the directory);
  // updated buffers go to --dump-buffers.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "dump"),
                          fs::directory_iterator()),
            1);
  rt::Tensor dumpedVar =
      rt::readTensorFile((dir_ / "buffers" / "running_var.pb").string());
  ASSERT_EQ(dumpedVar.shape(), (rt::Shape{1}));
  EXPECT_NEAR(dumpedVar.as<float>()[0], runningVar, 1e-5 * runningVar);

  // --save-weights: the same bytes in the written model, which stays a
  // model (node, input and output kept).
  onnx::ModelProto saved;
  {
    std::ifstream in(dir_ / "out" / "trained.onnx", std::ios::binary);
    ASSERT_TRUE(saved.ParseFromIstream(&in));
  }
  // The harness writes models on the wire format, without ONNX's checker:
  // check here that they pass it.
  EXPECT_NO_THROW(
      onnx::checker::check_model((dir_ / "out" / "trained.onnx").string()));
  ASSERT_EQ(saved.graph().initializer_size(), 2);
  ASSERT_EQ(saved.graph().node_size(), 1);
  for (const onnx::TensorProto &init : saved.graph().initializer()) {
    rt::Tensor savedTensor = rt::tensorFromProto(init, "");
    const rt::Tensor &want = init.name() == "w" ? dumped : dumpedVar;
    ASSERT_EQ(savedTensor.shape(), want.shape()) << init.name();
    EXPECT_EQ(std::memcmp(savedTensor.data(), want.data(), want.bytes()), 0)
        << init.name();
  }

  // Training on from the saved model continues where the run stopped.
  RunResult more = run("--steps 1 --inputs batch --weights out/trained.onnx");
  ASSERT_EQ(more.status, 0) << describe(more);
  ASSERT_EQ(more.losses.size(), 1u);
  EXPECT_NEAR(more.losses[0], want[5], 2e-6);
}

TEST_F(HarnessTest, JsonIsOneObjectWithTheKeys) {
  const Batch batch = makeBatch(1);
  writeBatch(dir_ / "batch", batch);
  writeModel(dir_ / "linear.onnx", kInitialW);

  RunResult r = run("--steps 3 --inputs batch --json");
  ASSERT_EQ(r.status, 0) << describe(r);
  // stdout is the object alone; progress went to stderr.
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.err.find("step 3/3 loss"), std::string::npos) << r.err;
  const json::Value o = parseJson(r.out);
  for (const char *key :
       {"losses", "step_seconds", "step_seconds_median", "samples_per_second",
        "samples_per_step", "peak_bytes", "planned_peak_bytes", "arena_bytes",
        "persistent_bytes", "workspace_bytes", "budget_bytes", "steps",
        "device", "backend", "host_peak_rss_bytes", "optimizer", "strategy",
        "data", "weights"})
    EXPECT_TRUE(o.get(key)) << "missing key " << key;

  std::vector<double> w = initialW();
  const std::vector<double> want = referenceLosses({batch}, w, 3);
  const std::vector<double> losses = numbers(o, "losses");
  ASSERT_EQ(losses.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    // %.9g round-trips the float32 loss: within its rounding of float64.
    EXPECT_NEAR(losses[i], want[i], 1e-5 * want[i]);
  }
  EXPECT_EQ(numbers(o, "step_seconds").size(), 3u);
  EXPECT_EQ(number(o, "steps"), 3);
  EXPECT_EQ(string(o, "backend"), "cpu");
  EXPECT_EQ(string(o, "device"), "cpu");
  EXPECT_EQ(string(o, "optimizer"), "sgd");
  EXPECT_EQ(string(o, "data"), "batch");
  EXPECT_EQ(string(o, "weights"), "linear.onnx");
  EXPECT_EQ(number(o, "arena_bytes"), 2564);
  EXPECT_EQ(number(o, "persistent_bytes"), 1792);
  EXPECT_EQ(number(o, "workspace_bytes"), 512);
  EXPECT_EQ(number(o, "budget_bytes"), 8192);
  // CPU: the measured peak is the two regions plus the workspace, exactly
  // what was planned here.
  EXPECT_EQ(number(o, "peak_bytes"), 2564 + 1792 + 512);
  EXPECT_EQ(number(o, "planned_peak_bytes"), 2564 + 1792 + 512);
  EXPECT_EQ(number(o, "samples_per_step"), kBatch);
  EXPECT_GT(number(o, "host_peak_rss_bytes"), 0);
  const double median = number(o, "step_seconds_median");
  EXPECT_GT(median, 0);
  EXPECT_NEAR(number(o, "samples_per_second"), kBatch / median,
              1e-6 * kBatch / median);
}

TEST_F(HarnessTest, DataFileCyclesThroughBatches) {
  const std::vector<Batch> batches = {makeBatch(2), makeBatch(3)};
  writeBatch(dir_ / "data" / "b0", batches[0]);
  writeBatch(dir_ / "data" / "b1", batches[1]);
  std::ofstream(dir_ / "data" / "list.txt")
      << "# two batches\nb0\n\n  b1  \n";
  writeModel(dir_ / "linear.onnx", kInitialW);

  RunResult r = run("--steps 5 --data data/list.txt");
  ASSERT_EQ(r.status, 0) << describe(r);
  std::vector<double> w = initialW();
  const std::vector<double> want = referenceLosses(batches, w, 5);
  ASSERT_EQ(r.losses.size(), 5u) << describe(r);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_NEAR(r.losses[i], want[i], 2e-6) << "step " << i + 1;
  EXPECT_NE(r.out.find("data: data/list.txt (2 batches)"), std::string::npos)
      << r.out;
}

TEST_F(HarnessTest, SyntheticDataIsReproducibleAndTrains) {
  writeModel(dir_ / "linear.onnx", kInitialW);
  RunResult a = run("--steps 8");
  RunResult b = run("--steps 8 --quiet");
  ASSERT_EQ(a.status, 0) << describe(a);
  ASSERT_EQ(b.status, 0) << describe(b);
  ASSERT_EQ(a.losses.size(), 8u);
  EXPECT_TRUE(b.losses.empty()) << "--quiet prints no step lines";
  EXPECT_NE(a.out.find("data: synthetic"), std::string::npos);
  for (size_t i = 1; i < a.losses.size(); ++i)
    EXPECT_LT(a.losses[i], a.losses[i - 1]) << "step " << i + 1;
  // Same seed, same data: the JSON losses equal the text ones.
  RunResult c = run("--steps 8 --json");
  ASSERT_EQ(c.status, 0) << describe(c);
  const std::vector<double> losses = numbers(parseJson(c.out), "losses");
  ASSERT_EQ(losses.size(), 8u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_NEAR(losses[i], a.losses[i], 5e-7);
}

TEST_F(HarnessTest, ExternalDataIsReadNextToTheModel) {
  const Batch batch = makeBatch(4);
  writeBatch(dir_ / "batch", batch);
  writeModel(dir_ / "m" / "ext.onnx", kInitialW, {kFeatures, 1}, true, true);
  RunResult r = run("--steps 2 --inputs batch --weights m/ext.onnx "
              "--save-weights m/ext-trained.onnx");
  ASSERT_EQ(r.status, 0) << describe(r);
  std::vector<double> w = initialW();
  const std::vector<double> want = referenceLosses({batch}, w, 2);
  ASSERT_EQ(r.losses.size(), 2u);
  EXPECT_NEAR(r.losses[0], want[0], 2e-6);
  EXPECT_NEAR(r.losses[1], want[1], 2e-6);
}

//===----------------------------------------------------------------------===//
// Weights: missing, mismatched, random
//===----------------------------------------------------------------------===//

TEST_F(HarnessTest, BadWeightsPathIsAnError) {
  RunResult r = run("--weights no/such/model.onnx");
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_NE(r.err.find("error: cannot open weights file "
                       "'no/such/model.onnx': no such file"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.losses.empty());

  std::ofstream(dir_ / "garbage.onnx") << "not a protobuf";
  RunResult g = run("--weights garbage.onnx");
  EXPECT_EQ(g.status, 1) << describe(g);
  EXPECT_NE(g.err.find("'garbage.onnx' is not an ONNX model"),
            std::string::npos)
      << g.err;
}

TEST_F(HarnessTest, AbsentDefaultModelNeedsRandomWeights) {
  RunResult r = run("--steps 1");
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_NE(r.err.find("cannot open weights file 'linear.onnx' (the model "
                       "this program was compiled from)"),
            std::string::npos)
      << r.err;
  RunResult random = run("--steps 3 --random-weights --json");
  ASSERT_EQ(random.status, 0) << describe(random);
  const json::Value o = parseJson(random.out);
  EXPECT_EQ(number(o, "random_tensors"), 2);
  EXPECT_EQ(string(o, "weights"), "");
  // --save-weights has nothing to write into without a model.
  RunResult save = run("--random-weights --save-weights out.onnx");
  EXPECT_EQ(save.status, 1) << describe(save);
}

TEST_F(HarnessTest, MissingInitializerIsAnErrorUnlessRandom) {
  writeModel(dir_ / "linear.onnx", {}, {kFeatures, 1}, /*withWeights=*/false);
  RunResult r = run("--steps 1");
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_NE(r.err.find("parameter 'w' has no initializer in 'linear.onnx'"),
            std::string::npos)
      << r.err;
  RunResult random = run("--steps 2 --random-weights --dump-buffers b");
  ASSERT_EQ(random.status, 0) << describe(random);
  EXPECT_NE(random.out.find("(0 loaded, 2 random)"), std::string::npos)
      << random.out;
  // A running variance starts at 1, then follows the losses.
  ASSERT_EQ(random.losses.size(), 2u);
  rt::Tensor var = rt::readTensorFile((dir_ / "b" / "running_var.pb").string());
  EXPECT_NEAR(var.as<float>()[0],
              kDecay * (kDecay * 1.0 + (1 - kDecay) * random.losses[0]) +
                  (1 - kDecay) * random.losses[1],
              1e-5);
  // Reproducible: the same random start twice.
  RunResult again = run("--steps 2 --random-weights");
  EXPECT_EQ(again.losses, random.losses);
}

TEST_F(HarnessTest, MismatchedInitializerNamesTensorAndFile) {
  writeModel(dir_ / "linear.onnx", {1, 2, 3, 4, 5}, {5, 1});
  RunResult r = run("--steps 1");
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_NE(r.err.find("parameter 'w' in 'linear.onnx' is f32 [5, 1] but the "
                       "program was compiled for f32 [4, 1]"),
            std::string::npos)
      << r.err;
}

//===----------------------------------------------------------------------===//
// Inputs and flags
//===----------------------------------------------------------------------===//

TEST_F(HarnessTest, MismatchedOrMissingInputsNameTheFile) {
  writeModel(dir_ / "linear.onnx", kInitialW);
  fs::create_directories(dir_ / "bad");
  std::vector<float> x(3 * kFeatures, 1.0f), y(kBatch, 0.0f);
  rt::writeTensorFile((dir_ / "bad" / "input_0.pb").string(),
                      rt::TensorView(rt::DType::F32, {3, kFeatures}, x.data()),
                      "x");
  RunResult missing = run("--inputs bad");
  EXPECT_EQ(missing.status, 1) << describe(missing);
  EXPECT_NE(missing.err.find("bad/input_1.pb' is missing: input 'y' "
                             "(f32 [8, 1])"),
            std::string::npos)
      << missing.err;

  rt::writeTensorFile((dir_ / "bad" / "input_1.pb").string(),
                      rt::TensorView(rt::DType::F32, {kBatch, 1}, y.data()),
                      "y");
  RunResult shape = run("--inputs bad");
  EXPECT_EQ(shape.status, 1) << describe(shape);
  EXPECT_NE(shape.err.find("bad/input_0.pb' holds f32 [3, 4] but input 'x' "
                           "of the program is f32 [8, 4]"),
            std::string::npos)
      << shape.err;

  RunResult noDir = run("--inputs nowhere");
  EXPECT_EQ(noDir.status, 1);
  EXPECT_NE(noDir.err.find("'nowhere' does not exist"), std::string::npos)
      << noDir.err;
}

TEST_F(HarnessTest, BadFlagsPrintUsage) {
  for (const char *args : {"--bogus", "--steps 0", "--steps x", "--steps",
                           "--inputs a --data b", "model.onnx",
                           "--json=yes"}) {
    RunResult r = run(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << describe(r);
    EXPECT_NE(r.err.find("error: "), std::string::npos) << args;
    EXPECT_NE(r.err.find("usage: harness-linear-train"), std::string::npos)
        << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  RunResult help = run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--random-weights"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// In-process: programs that fail
//===----------------------------------------------------------------------===//

void failingStep(rt::StepContext &ctx) {
  ctx.currentOp = 0;
  rt::fill(rt::TensorView(rt::DType::F32, {}, ctx.arena), 1.0);
  ctx.currentOp = 1;
  std::vector<float> table(4, 0.0f), out(1);
  int64_t index = 99;
  rt::gather(rt::TensorView(rt::DType::F32, {4}, table.data()),
             rt::TensorView(rt::DType::I64, {1}, &index),
             rt::TensorView(rt::DType::F32, {1}, out.data()), 0);
}

rt::ProgramSpec lossOnlyProgram(rt::TrainStepFn step) {
  rt::ProgramSpec program;
  program.modelPath = "";
  program.backend = rt::Backend::Cpu;
  program.optimizer = "sgd";
  program.strategy = "test";
  program.arenaBytes = 256;
  program.persistentBytes = 0;
  program.workspaceBytes = 0;
  program.plannedPeakBytes = 256;
  program.budgetBytes = 0;
  program.samplesPerStep = 1;
  program.results = {
      {"loss", "loss", rt::DType::F32, {}, rt::Region::Arena, 0, -1}};
  program.ops = {"remat.fill at 'one'", "remat.gather at 'lookup'"};
  program.trainStep = step;
  return program;
}

int callHarness(std::vector<std::string> args, const rt::ProgramSpec &program,
                std::string &err) {
  args.insert(args.begin(), "failing-train");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int status =
      rt::harnessMain(static_cast<int>(argv.size()), argv.data(), program);
  ::testing::internal::GetCapturedStdout();
  err = ::testing::internal::GetCapturedStderr();
  return status;
}

TEST(HarnessInProcess, StepErrorNamesStepAndOp) {
  std::string err;
  EXPECT_EQ(callHarness({"--steps", "3"}, lossOnlyProgram(failingStep), err),
            1);
  EXPECT_NE(err.find("failing-train: error: step 1: "), std::string::npos)
      << err;
  EXPECT_NE(err.find("(in op remat.gather at 'lookup')"), std::string::npos)
      << err;
}

TEST(HarnessInProcess, InconsistentLayoutIsReportedBeforeRunning) {
  rt::ProgramSpec program =
      lossOnlyProgram([](rt::StepContext &) { FAIL() << "step ran"; });
  program.results[0].offset = 1024; // outside the 256-byte arena
  std::string err;
  EXPECT_EQ(callHarness({}, program, err), 1);
  EXPECT_NE(err.find("the program is inconsistent"), std::string::npos) << err;
  EXPECT_NE(err.find("result 0 (loss 'loss') at offset 1024"),
            std::string::npos)
      << err;
}

} // namespace
