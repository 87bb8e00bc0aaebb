// pin_time_zone: TZ names the zone glibc uses without it, so local times do not change, and a TZ
// the user set is kept.
#include "apps/time_zone.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace sluice::app {
namespace {

// A fixed local wall-clock time (1 July 2021, 12:34:56, DST decided by the zone) as time_t.
time_t local_noon() {
  std::tm t{};
  t.tm_year = 121, t.tm_mon = 6, t.tm_mday = 1, t.tm_hour = 12, t.tm_min = 34, t.tm_sec = 56;
  t.tm_isdst = -1;
  return std::mktime(&t);
}

class TimeZoneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* tz = std::getenv("TZ")) saved_ = tz;
  }
  void TearDown() override {
    if (saved_) {
      setenv("TZ", saved_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  std::optional<std::string> saved_;
};

TEST_F(TimeZoneTest, PinsTheDefaultZoneWithoutChangingLocalTimes) {
  unsetenv("TZ");
  tzset();
  const time_t unpinned = local_noon();
  pin_time_zone();
  ASSERT_NE(std::getenv("TZ"), nullptr);
  EXPECT_STREQ(std::getenv("TZ"), ":/etc/localtime");
  EXPECT_EQ(local_noon(), unpinned);
}

TEST_F(TimeZoneTest, KeepsTheZoneTheUserSet) {
  setenv("TZ", "UTC0", 1);
  pin_time_zone();
  EXPECT_STREQ(std::getenv("TZ"), "UTC0");
  EXPECT_EQ(local_noon(), time_t{1625142896});  // 2021-07-01T12:34:56Z.
}

}  // namespace
}  // namespace sluice::app
