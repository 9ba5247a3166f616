//===- LossScaleUpdateTest.cpp - Dynamic loss scaling vs torch.amp --------===//
//
// Replays the sequences PyTorch's own GradScaler produced
// (tests/models/pytorch/mixed_precision/grad_scaler.json, made by
// make_grad_scaler_reference.py with torch.amp.GradScaler("cpu")): each
// step's gradient is scale * value in fp32, as scaler.scale(loss).backward()
// leaves it; anyNonFinite decides whether the step is skipped and
// lossScaleUpdate moves the scale and the growth tracker. Both must give
// PyTorch's skipped steps, scales and trackers exactly, over every case:
// initial overflows, growth after exactly growth_interval finite steps
// (2000 and 3), overflows resetting the tracker, inf, -inf and NaN, growth
// refused at fp32's top, and a finite gradient that overflows once scaled.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/Kernels.h"

#include "MiniJson.h"
#include "TestUtil.h"

#include <fstream>
#include <sstream>

using namespace remat::rt;
namespace json = remat::test::json;

namespace {

json::Value readReference() {
  const std::string path =
      std::string(REMAT_TESTS_DIR) +
      "/models/pytorch/mixed_precision/grad_scaler.json";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

const json::Value &field(const json::Value &object, const char *key) {
  const json::Value *value = object.get(key);
  if (!value)
    throw std::runtime_error(std::string("grad_scaler.json: no '") + key + "'");
  return *value;
}

TEST(LossScaleUpdate, ReplaysPyTorchsGradScaler) {
  const json::Value reference = readReference();
  const json::Value &cases = field(reference, "cases");
  ASSERT_GE(cases.array.size(), 4u);
  for (const json::Value &c : cases.array) {
    const std::string name = field(c, "name").string;
    SCOPED_TRACE(name);
    std::vector<float> values;
    for (const json::Value &entry : field(c, "script").array)
      for (int i = 0; i < entry.array[1].number; ++i)
        values.push_back(std::strtof(entry.array[0].string.c_str(), nullptr));
    const auto &scales = field(c, "scale_after").array;
    const auto &trackers = field(c, "growth_tracker_after").array;
    const auto &skipped = field(c, "step_skipped").array;
    ASSERT_EQ(values.size(), scales.size());

    Tensor scale(DType::F32, {}), tracker(DType::I32, {});
    scale.as<float>()[0] = static_cast<float>(field(c, "init_scale").number);
    tracker.as<int32_t>()[0] = 0;
    Tensor found(DType::Bool, {}), clear(DType::Bool, {});
    clear.as<uint8_t>()[0] = 0;
    Tensor grad(DType::F32, {2});
    size_t mismatches = 0;
    for (size_t step = 0; step < values.size() && mismatches < 5; ++step) {
      // d/dp sum(p * [1, v]) = [1, v], scaled in fp32.
      const float s = scale.as<float>()[0];
      grad.as<float>()[0] = s * 1.0f;
      grad.as<float>()[1] = s * values[step];
      anyNonFinite(grad.view(), clear.view(), found.view());
      lossScaleUpdate(scale.view(), tracker.view(), found.view(), scale.view(),
                      tracker.view(), field(c, "growth_factor").number,
                      field(c, "backoff_factor").number,
                      static_cast<int64_t>(field(c, "growth_interval").number));
      const bool ok =
          (found.as<uint8_t>()[0] != 0) == skipped[step].boolean &&
          scale.as<float>()[0] == static_cast<float>(scales[step].number) &&
          tracker.as<int32_t>()[0] == static_cast<int32_t>(trackers[step].number);
      if (!ok) {
        ++mismatches;
        ADD_FAILURE() << "step " << step + 1 << ": skipped "
                      << int(found.as<uint8_t>()[0]) << " scale "
                      << scale.as<float>()[0] << " tracker "
                      << tracker.as<int32_t>()[0] << "; PyTorch: skipped "
                      << skipped[step].boolean << " scale " << scales[step].number
                      << " tracker " << trackers[step].number;
      }
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

} // namespace
