// Hardware tests of the pair runner with x86 forms: which instructions co-issue and which share a
// pipe, on any x86-64 core with the features each test names (the rest skip).
#include <catch2/catch.hpp>

#include "cpu/cpu_info.hpp"
#include "hw_fixture.hpp"
#include "pairs/classify.hpp"
#include "pairs/pair_runner.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

const CpuInfo& cpu() { return test::this_cpu(); }
ProbeRunner& runner() { return test::shared_runner(); }

}  // namespace

// Every core this test runs on has integer ALU ports that host no FMA, so the two never share all
// their pipes.
// Full co-issue is not universal: where the vector units sit on integer ports (Intel's ports 0 and
// 1), the allocator can put an add on an FMA port now and then, and the pair reads partial (seen on
// an Emerald Rapids VM, once in three runs).
TEST_CASE("hw: an integer add beside a vector FMA never shares all its pipes", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  PairResult p;
  bool any_trusted = false;
  const bool shown = test::in_one_of(3, [&] {
    p = measure_pair(runner(), test::spec("add r64, r64"), test::spec("vfmadd231ps ymm, ymm, ymm"), 1, 1);
    any_trusted |= p.mix.status != Status::mistrusted;
    return p.mix.status == Status::ok && p.classification && *p.classification != PairClass::shared;
  });
  if (!shown && !any_trusted) PP_SKIP("every attempt stayed mistrusted: " << p.mix.reason);
  INFO(p.mix.reason);
  CHECK(shown);
}

TEST_CASE("hw: an instruction paired with itself shares its own pipes", "[hw][pair_runner]") {
  PairResult p = measure_pair(runner(), test::spec("imul r64, r64"), test::spec("imul r64, r64"), 1, 1);
  INFO(p.mix.reason);
  if (p.mix.status == Status::mistrusted) PP_SKIP("the pair stayed mistrusted: " << p.mix.reason);
  REQUIRE(p.mix.status == Status::ok);
  REQUIRE(p.same_port);
  CHECK(*p.same_port > 0.8);
  CHECK(*p.classification == PairClass::shared);
}

TEST_CASE("hw: FMA and multiply share the multiplier pipes", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  PairResult p = measure_pair(runner(), test::spec("vfmadd231ps ymm, ymm, ymm"), test::spec("vmulps ymm, ymm, ymm"), 1, 1);
  INFO(p.mix.reason);
  if (p.mix.status == Status::mistrusted) PP_SKIP("the pair stayed mistrusted: " << p.mix.reason);
  REQUIRE(p.mix.status == Status::ok);
  CHECK(*p.classification == PairClass::shared);
}

TEST_CASE("hw: a pair matrix finds a self-consistent grouping", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  std::vector<ProbeSpec> s = {test::spec("vfmadd231ps ymm, ymm, ymm"), test::spec("vmulps ymm, ymm, ymm"), test::spec("add r64, r64")};
  PairMatrix m = measure_pair_matrix(runner(), s);
  REQUIRE(m.instructions.size() == 3);
  REQUIRE(m.pairs.size() == 6);
  // Groups inferred from mistrusted pairs (a busy sibling thread) say nothing about the pipes.
  for (const auto& p : m.pairs)
    if (p.mix.status == Status::mistrusted) PP_SKIP("a pair stayed mistrusted: " << p.mix.reason);
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(m.same_port[i][i]);
    CHECK(*m.same_port[i][i] > 0.8);  // each with itself
  }
  // FMA and MUL land in one group, the integer add in another.
  bool together = false;
  for (const auto& g : m.groups)
    if (g.size() == 2 && g[0] == "vfmadd231ps ymm, ymm, ymm" && g[1] == "vmulps ymm, ymm, ymm") together = true;
  CHECK(together);
}

TEST_CASE("hw: a pair with an unsupported part is skipped, never run", "[hw][pair_runner]") {
  if (cpu().has("amx_bf16")) PP_SKIP("this CPU has amx_bf16, so tdpbf16ps is not unsupported here");
  PairResult p = measure_pair(runner(), test::spec("add r64, r64"), test::spec("tdpbf16ps tmm, tmm, tmm"), 1, 1);
  CHECK(p.mix.status == Status::skipped);
  CHECK(p.mix.reason.find("amx_bf16") != std::string::npos);
  CHECK_FALSE(p.classification);
}

TEST_CASE("hw: mixes refuse what inst refuses and run stack forms only balanced", "[hw][pair_runner]") {
  // A pair with syscall would make real system calls; it is refused before anything runs.
  PairResult sys = measure_pair(runner(), test::spec("syscall"), test::spec("add r64, r64"), 1, 1);
  CHECK(sys.mix.status == Status::skipped);
  CHECK(sys.mix.reason.find("refused before running") == 0);
  CHECK_FALSE(sys.classification);

  // pop beside its companion push, in either order, runs balanced (push first); alone it is refused.
  for (const auto& [a, b] : {std::pair<const char*, const char*>{"pop r64", "push r64"}, {"push r64", "pop r64"}}) {
    MixResult m = runner().run_mix({MixSpec{test::spec(a), 1}, MixSpec{test::spec(b), 1}});
    INFO(a << " + " << b << ": " << to_string(m.status) << " " << m.reason);
    CHECK(m.status != Status::error);
    CHECK(m.status != Status::skipped);
  }
  MixResult alone = runner().run_mix({MixSpec{test::spec("pop r64"), 1}, MixSpec{test::spec("add r64, r64"), 1}});
  CHECK(alone.status == Status::skipped);
  CHECK(alone.reason.find("push r64") != std::string::npos);
  MixResult unequal = runner().run_mix({MixSpec{test::spec("pop r64"), 2}, MixSpec{test::spec("push r64"), 1}});
  CHECK(unequal.status == Status::skipped);
  // The harness still measures after all of them.
  MixResult after = runner().run_mix({MixSpec{test::spec("add r64, r64"), 1}});
  CHECK(after.status != Status::error);
}
