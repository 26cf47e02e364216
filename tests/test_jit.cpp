// Tests for asm/jit.cpp: generated code is owned by one JitFunction at a time, released once, and runs.
#include <catch2/catch.hpp>

#include "asm/target.hpp"
#include "harness/probe_buffer.hpp"
#include "asm/jit.hpp"
#include "asm/jit_runtime.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

using namespace peakprobe;

TEST_CASE("jit: a function has one owner, and a moved-from one is empty", "[jit]") {
  isa::JitFunction empty;
  CHECK(empty.fn() == nullptr);
  CHECK(empty.code_size() == 0);

  const isa::Target& t = isa::host_target();
  auto form = t.probe_form(t.ruler_forms().one_cycle, CpuInfo{});
  REQUIRE(form.ok());
  auto plan = form.value()->plan_latency("-");
  REQUIRE(plan.ok());
  auto code = plan.value()->compile(8);
  REQUIRE(code.ok());
  isa::JitFunction a = std::move(code.value());
  CHECK(a.fn() != nullptr);
  CHECK(a.code_size() > 0);
  isa::JitFunction b = std::move(a);
  CHECK(a.fn() == nullptr);
  CHECK(b.fn() != nullptr);
  auto other = plan.value()->compile(16);
  REQUIRE(other.ok());
  CHECK(other->code_size() > b.code_size());  // twice the copies
  b = std::move(other.value());  // releases the first code, takes the second
  CHECK(b.fn() != nullptr);
  b = isa::JitFunction();
  CHECK(b.fn() == nullptr);
}

namespace {

// The clock's add on every free register, with the buffer and constants its code runs on.
struct RulerStream {
  isa::StreamHandle plan;
  ProbeBuffer buffer;
  isa::ProbeConstants consts;
};

std::unique_ptr<RulerStream> ruler_stream() {
  const isa::Target& t = isa::host_target();
  auto form = t.probe_form(t.ruler_forms().one_cycle, CpuInfo{});
  REQUIRE(form.ok());
  auto plan = form.value()->plan_throughput(form.value()->max_chains(), "-");
  REQUIRE(plan.ok());
  auto s = std::make_unique<RulerStream>();
  s->plan = plan.value();
  REQUIRE(s->buffer.ok());
  const isa::BufferFill fill = s->plan->prepare(s->consts, "-");
  s->buffer.fill(fill.pattern, fill.chase_bits, fill.chase_byteswap);
  return s;
}

}  // namespace

TEST_CASE("jit: the clock's chain compiles and runs with the constants it prepared", "[jit]") {
  auto s = ruler_stream();
  auto code = s->plan->compile(4);
  REQUIRE(code.ok());
  code->fn()(100, s->buffer.data(), &s->consts);  // returns: the stream restored what it used
  SUCCEED();
}

TEST_CASE("jit: code made while PageAlignedCode lives starts on a page boundary, runs, and is released",
          "[jit]") {
  auto s = ruler_stream();
  const isa::StreamHandle& plan = s->plan;
  // Something small first, so that the runtime's next free byte is not on a page boundary.
  auto before = plan->compile(1);
  REQUIRE(before.ok());
  std::vector<isa::JitFunction> aligned;
  {
    const isa::PageAlignedCode scope;
    {
      const isa::PageAlignedCode nested;  // a nested scope leaves the outer one in force
    }
    for (int copies : {1, 3, 8, 200}) {
      auto code = plan->compile(copies);
      REQUIRE(code.ok());
      CHECK(reinterpret_cast<uintptr_t>(code->fn()) % 4096 == 0);
      code->fn()(10, s->buffer.data(), &s->consts);
      aligned.push_back(std::move(code.value()));
    }
  }
  // Out of the scope, code goes wherever the runtime has room again (somewhere not page-aligned,
  // for at least one of a few small functions).
  std::vector<isa::JitFunction> unaligned;
  bool any_off_page = false;
  for (int i = 0; i < 4; ++i) {
    auto code = plan->compile(1);
    REQUIRE(code.ok());
    any_off_page = any_off_page || reinterpret_cast<uintptr_t>(code->fn()) % 4096 != 0;
    unaligned.push_back(std::move(code.value()));
  }
  CHECK(any_off_page);
  aligned.clear();  // releases each block by its start, not by the aligned entry point
  auto again = plan->compile(8);
  REQUIRE(again.ok());
  again->fn()(10, s->buffer.data(), &s->consts);
}

TEST_CASE("jit: the data pattern holds 1 in every element of the dtype", "[jit]") {
  uint8_t out[64];
  isa::fill_data_pattern(out, "f64");
  double d;
  std::memcpy(&d, out + 56, 8);
  CHECK(d == 1.0);
  isa::fill_data_pattern(out, "f32");
  float f;
  std::memcpy(&f, out + 60, 4);
  CHECK(f == 1.0f);
  for (const auto& [dtype, bytes] : std::vector<std::pair<const char*, size_t>>{{"i64", 8}, {"i32", 4}, {"i16", 2}}) {
    INFO(dtype);
    isa::fill_data_pattern(out, dtype);
    for (size_t at = 0; at < 64; at += bytes) {
      uint64_t v = 0;
      std::memcpy(&v, out + at, bytes);
      CHECK(v == 1);
    }
  }
  isa::fill_data_pattern(out, "-");  // bytes of 1, as address-free filler
  CHECK(std::count(out, out + 64, uint8_t{1}) == 64);
}

// An instruction the assembler cannot encode is reported, not dropped: the first error is kept and
// the code never reaches the runtime (an AArch64 kernel's load with an offset no form encodes had
// vanished from it without a word).
TEST_CASE("jit: code whose emitter reported an error is refused with the first error", "[jit]") {
  asmjit::CodeHolder code;
  REQUIRE(code.init(isa::jit_environment()) == asmjit::kErrorOk);
  isa::EmitErrors errors(code);
  CHECK_FALSE(errors.failed());
  REQUIRE(code.errorHandler() == &errors);
  code.errorHandler()->handleError(asmjit::kErrorInvalidDisplacement, "invalid displacement", nullptr);
  code.errorHandler()->handleError(asmjit::kErrorInvalidInstruction, "invalid instruction", nullptr);
  CHECK(errors.failed());
  CHECK(errors.message() == "invalid displacement");
  auto fn = isa::add_to_runtime(code);
  REQUIRE_FALSE(fn.ok());
  CHECK_THAT(fn.error(), Catch::Contains("could not be encoded") && Catch::Contains("invalid displacement"));
}

// Every generator starts from HostCode: the handler is set for the code's life, an error reported
// while emitting fails finish(), and the listing is written only for code that was added.
TEST_CASE("jit: host code carries the error handler and writes the listing of code it adds", "[jit]") {
  {
    isa::HostCode code;
    REQUIRE(code.holder()->errorHandler() != nullptr);
    code.holder()->errorHandler()->handleError(asmjit::kErrorInvalidDisplacement, "invalid displacement", nullptr);
    auto fn = code.finish();
    REQUIRE_FALSE(fn.ok());
    CHECK_THAT(fn.error(), Catch::Contains("invalid displacement"));
  }
  std::string listing = "untouched";
  {
    isa::HostCode code(&listing);
    REQUIRE(code.holder()->logger() != nullptr);
    code.holder()->errorHandler()->handleError(asmjit::kErrorInvalidInstruction, "invalid instruction", nullptr);
    CHECK_FALSE(code.finish().ok());
  }
  CHECK(listing == "untouched");  // refused code leaves no listing
  isa::HostCode without_listing;
  CHECK(without_listing.holder()->logger() == nullptr);
}

TEST_CASE("jit: code generated without an error handler is refused", "[jit]") {
  asmjit::CodeHolder code;
  REQUIRE(code.init(isa::jit_environment()) == asmjit::kErrorOk);
  auto fn = isa::add_to_runtime(code);
  REQUIRE_FALSE(fn.ok());
  CHECK_THAT(fn.error(), Catch::Contains("without an error handler"));
}
