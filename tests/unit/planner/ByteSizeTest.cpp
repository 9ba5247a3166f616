//===- ByteSizeTest.cpp - Budget strings ----------------------------------===//

#include "remat/Planning/ByteSize.h"

#include <gtest/gtest.h>

using remat::formatBinaryBytes;
using remat::formatBytes;
using remat::parseByteSize;

static int64_t parsed(const char *text) {
  std::string error;
  std::optional<int64_t> bytes = parseByteSize(text, error);
  EXPECT_TRUE(bytes.has_value()) << text << ": " << error;
  return bytes.value_or(-1);
}

static std::string rejected(const char *text) {
  std::string error;
  EXPECT_FALSE(parseByteSize(text, error).has_value()) << text;
  return error;
}

TEST(ByteSizeTest, DecimalAndBinaryUnits) {
  EXPECT_EQ(parsed("40GB"), 40'000'000'000);
  EXPECT_EQ(parsed("40 GB"), 40'000'000'000);
  EXPECT_EQ(parsed("1.5GiB"), 1'610'612'736);
  EXPECT_EQ(parsed("512MB"), 512'000'000);
  EXPECT_EQ(parsed("512MiB"), 536'870'912);
  EXPECT_EQ(parsed("2KB"), 2000);
  EXPECT_EQ(parsed("2KiB"), 2048);
  EXPECT_EQ(parsed("1TB"), 1'000'000'000'000);
  EXPECT_EQ(parsed("1TiB"), 1'099'511'627'776);
  EXPECT_EQ(parsed("1000000"), 1'000'000);
  EXPECT_EQ(parsed("7B"), 7);
  EXPECT_EQ(parsed("8gb"), 8'000'000'000); // units are case-insensitive
}

TEST(ByteSizeTest, MalformedBudgetsSayWhy) {
  EXPECT_NE(rejected("40XB").find("unknown unit 'XB'"), std::string::npos);
  EXPECT_NE(rejected("GB").find("is not a size"), std::string::npos);
  EXPECT_NE(rejected("-1GB").find("is not a size"), std::string::npos);
  EXPECT_NE(rejected("").find("is not a size"), std::string::npos);
  EXPECT_NE(rejected("1.5").find("whole number"), std::string::npos);
  EXPECT_NE(rejected("1e30TB").find("unknown unit"), std::string::npos);
  EXPECT_NE(rejected("99999999TB").find("too large"), std::string::npos);
}

TEST(ByteSizeTest, Formatting) {
  EXPECT_EQ(formatBytes(999), "999 B");
  EXPECT_EQ(formatBytes(40'000'000'000), "40.00 GB");
  EXPECT_EQ(formatBinaryBytes(1'610'612'736), "1.50 GiB");
}
