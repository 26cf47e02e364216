// The failure tracking behind PP_SKIP (skip.hpp): a Catch2 listener that notes a failed assertion
// in the running test case, so a test that failed before skipping is not reported as Skipped.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // TestEventListenerBase and CATCH_REGISTER_LISTENER
#include "skip.hpp"

namespace peakprobe::test {
namespace {

bool failed_in_this_test = false;

struct FailureTracker : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    TestEventListenerBase::testCaseStarting(info);
    failed_in_this_test = false;
  }
  bool assertionEnded(Catch::AssertionStats const& stats) override {
    if (!stats.assertionResult.isOk()) failed_in_this_test = true;
    return TestEventListenerBase::assertionEnded(stats);
  }
};

CATCH_REGISTER_LISTENER(FailureTracker)

}  // namespace

bool current_test_failed() { return failed_in_this_test; }

}  // namespace peakprobe::test
