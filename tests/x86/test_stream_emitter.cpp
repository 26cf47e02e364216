// The generated code itself (read back from an asmjit Builder, never run here) has the structure the
// method needs: K independent chains for throughput, one unbroken chain for latency.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "asm/x86/inst_form.hpp"
#include "asm/x86/stream_emitter.hpp"
#include "asm/x86/stream_plan.hpp"
#include "generated_code.hpp"
#include "harness/probe_runner.hpp"
#include "hw_fixture.hpp"
#include "skip.hpp"

using namespace peakprobe;
using namespace peakprobe::test;

namespace {

x86::HostIsa full_isa() {
  x86::HostIsa isa;
  isa.avx = isa.avx2 = isa.fma = isa.avx512f = isa.avx512bw = isa.avx512dq = true;
  return isa;
}

// A stream function emitted into a Builder (never assembled), its nodes to read back.
struct EmittedStream {
  asmjit::CodeHolder code;
  asmjit::x86::Builder b;
  EmittedStream(const peakprobe::x86::StreamPlan& plan, int copies) {
    code.init(asmjit::Environment(asmjit::Arch::kX64));
    code.attach(&b);
    REQUIRE(peakprobe::x86::emit_stream_function(*b.as<asmjit::x86::Emitter>(), plan, copies, full_isa()) ==
            asmjit::kErrorOk);
  }
};

const char* kForms[] = {
    "vfmadd231ps ymm, ymm, ymm", "vfmadd231ps zmm, zmm, zmm", "imul r64, r64",   "add r64, r64",
    "vaddps xmm, xmm, xmm",      "addps xmm, xmm",            "popcnt r64, r64", "vcvtdq2ps ymm, ymm",
    "vpermps ymm, ymm, ymm",     "vpdpbusd zmm, zmm, zmm",    "shl r64, cl",     "lea r64, m",
    "vmovups ymm, m256",         "mov r64, m64",              "vgatherdps ymm, vm32y, ymm",
    "vgatherdps zmm {k}, vm32z", "vfmadd231ps zmm, zmm, m32bcst", "vcvtps2ph xmm, ymm, imm8",
    "vmovd r32, xmm",            "vpcmpeqd k, zmm, zmm",       "div r64",
};

}  // namespace

// The instruction that last wrote `reg` before body position `pos`, walking back around the loop.
int reaching_writer(const std::vector<BodyInst>& body, size_t pos, const PhysReg& reg) {
  for (size_t back = 1; back <= body.size(); ++back) {
    size_t i = (pos + body.size() - back) % body.size();
    if (body[i].writes.count(reg)) return int(i);
  }
  return -1;  // set before the loop only
}

using Role = x86::PlannedInst::Role;

Role role_at(const x86::StreamPlan& plan, size_t pos) { return plan.copy[pos % plan.copy.size()].role; }

TEST_CASE("throughput stream: K chains, each instance depends only on its own chain", "[emitter]") {
  const auto isa = full_isa();
  for (const char* text : kForms) {
    auto form = x86::resolve_inst(text);
    REQUIRE(form.ok());
    const int kmax = x86::max_chains(form.value());
    for (int k : {1, 4, 8}) {
      if (k > kmax) continue;
      INFO(text << " K=" << k);
      auto plan = x86::plan_throughput(form.value(), k, isa, "f32");
      REQUIRE(plan.ok());
      const int copies = 3;
      auto body = loop_body(plan.value(), copies, isa);
      REQUIRE(body.size() == plan->copy.size() * copies);
      // Position of each measured instruction among the measured ones.
      std::vector<int> ordinal(body.size(), -1);
      int n = 0;
      for (size_t i = 0; i < body.size(); ++i)
        if (role_at(plan.value(), i) == Role::measured) {
          CHECK(body[i].id == form->id);
          ordinal[i] = n++;
        }
      REQUIRE(n == copies * k);
      std::set<PhysReg> dests;
      for (size_t i = 0; i < body.size(); ++i) {
        if (ordinal[i] < 0) continue;
        if (ordinal[i] < k) dests.insert(body[i].writes.begin(), body[i].writes.end());
        for (const auto& reg : body[i].reads) {
          int w = reaching_writer(body, i, reg);
          if (w < 0 || ordinal[size_t(w)] < 0) continue;  // set up before the loop, or by a reset
          // A value made by a measured instance is consumed only by the same chain, K instances later.
          const int distance = (ordinal[i] - ordinal[size_t(w)] + n) % n;
          CHECK((distance == k % n || (k == n && distance == 0)));
        }
      }
      // K distinct destination registers (forms with a register result).
      if (!plan->dest_ids.empty()) CHECK(dests.size() >= size_t(k));
    }
  }
}

TEST_CASE("latency stream: every link reads the previous link's result", "[emitter]") {
  const auto isa = full_isa();
  for (const char* text : kForms) {
    auto form = x86::resolve_inst(text);
    REQUIRE(form.ok());
    auto plan = x86::plan_latency(form.value(), isa, "f32");
    if (!plan.ok()) continue;  // forms without a register result: covered below
    INFO(text << " (" << plan->method << ")");
    auto body = loop_body(plan.value(), 4, isa);
    // Links are the measured instructions and bridges; resets (gather masks) are not in the chain.
    std::vector<BodyInst> links;
    for (size_t i = 0; i < body.size(); ++i)
      if (role_at(plan.value(), i) != Role::reset) links.push_back(body[i]);
    REQUIRE(links.size() >= 4);
    size_t measured = 0;
    for (size_t i = 0; i < links.size(); ++i) {
      const BodyInst& prev = links[(i + links.size() - 1) % links.size()];
      CHECK(intersects(prev.writes, links[i].reads));
      measured += links[i].id == form->id;
    }
    CHECK(measured == 4);
  }
}

TEST_CASE("latency stream: stores and flag-only forms are throughput only", "[emitter]") {
  const auto isa = full_isa();
  for (const char* text : {"vmovups m256, ymm", "mov m64, r64", "cmp r64, r64", "movzx r32, m8"}) {
    INFO(text);
    auto form = x86::resolve_inst(text);
    REQUIRE(form.ok());
    auto plan = x86::plan_latency(form.value(), isa, "-");
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().find("throughput only") != std::string::npos);
  }
}

TEST_CASE("pointer chase: the load's address register is its own destination", "[emitter]") {
  const auto isa = full_isa();
  auto form = x86::resolve_inst("mov r64, m64");
  REQUIRE(form.ok());
  auto plan = x86::plan_latency(form.value(), isa, "-");
  REQUIRE(plan.ok());
  CHECK(plan->chase_bits == 64);
  auto body = loop_body(plan.value(), 2, isa);
  REQUIRE(body.size() == 2);
  CHECK(body[0].writes == std::set<PhysReg>{*body[0].reads.begin()});
}

TEST_CASE("16-register forms never touch vector registers 16..31", "[emitter]") {
  const auto isa = full_isa();
  auto form = x86::resolve_inst("vperm2f128 ymm, ymm, ymm, imm8");
  REQUIRE(form.ok());
  CHECK_FALSE(form->evex_native);
  auto plan = x86::plan_throughput(form.value(), x86::max_chains(form.value()), isa, "f32");
  REQUIRE(plan.ok());
  for (const auto& b : loop_body(plan.value(), 1, isa))
    for (const auto& r : b.writes) CHECK(r.second < 16);
}

TEST_CASE("the compiled function is callable code of plausible size", "[emitter]") {
  const auto isa = full_isa();
  auto form = x86::resolve_inst("add r64, r64");
  REQUIRE(form.ok());
  auto plan = x86::plan_throughput(form.value(), 4, isa, "-");
  REQUIRE(plan.ok());
  auto small = x86::compile_stream(plan.value(), 4, isa);
  auto large = x86::compile_stream(plan.value(), 8, isa);
  REQUIRE(small.ok());
  REQUIRE(large.ok());
  CHECK(small->fn() != nullptr);
  // Doubling the copies adds 16 three-byte adds: exactly 48 bytes more code.
  CHECK(large->code_size() - small->code_size() == 48);
}

TEST_CASE("mix stream: parts interleaved in the asked ratio, no dependency across or within parts", "[emitter]") {
  const auto isa = full_isa();
  // la, lb: chain limits (0: one chain per instance); limited parts rotate through their chains.
  struct Case { const char* a; const char* b; int wa, wb, la = 0, lb = 0; };
  const Case cases[] = {
      {"vfmadd231ps ymm, ymm, ymm", "vaddps ymm, ymm, ymm", 1, 1},
      {"vfmadd231ps zmm, zmm, zmm", "vaddps zmm, zmm, zmm", 2, 1},
      {"vfmadd231ps ymm, ymm, ymm", "vmovups ymm, m256", 1, 2},
      {"add r64, r64", "vfmadd231ps ymm, ymm, ymm", 3, 1},
      {"imul r64, r64", "imul r64, r64", 1, 1},
      {"vgatherdps ymm, vm32y, ymm", "vfmadd231ps ymm, ymm, ymm", 1, 1},
      {"add r64, r64", "crc32 r64, r64", 5, 1, 8, 5},
      {"vfmadd231pd ymm, ymm, ymm", "add r64, r64", 2, 5, 12, 0},
  };
  for (const auto& c : cases) {
    auto fa = x86::resolve_inst(c.a);
    auto fb = x86::resolve_inst(c.b);
    REQUIRE(fa.ok());
    REQUIRE(fb.ok());
    std::vector<x86::MixEntry> entries = {{&fa.value(), c.wa, c.la}, {&fb.value(), c.wb, c.lb}};
    const int rounds = std::min(8, x86::max_rounds(entries));
    INFO(c.a << " : " << c.b << " " << c.wa << ":" << c.wb << " limits " << c.la << "," << c.lb << " rounds=" << rounds);
    REQUIRE(rounds >= 1);
    auto plan = x86::plan_mix(entries, rounds, isa, "f32");
    REQUIRE(plan.ok());
    CHECK(plan->measured_per_form == std::vector<int>{c.wa * rounds, c.wb * rounds});
    const int copies = 2;
    auto body = loop_body(plan.value(), copies, isa);
    // Which part each measured instruction belongs to, in program order.
    std::vector<int> part(body.size(), -1);
    std::vector<int> ordinal(body.size(), -1);
    int seen[2] = {0, 0};
    std::string pattern;
    size_t mi = 0;
    for (size_t i = 0; i < body.size(); ++i) {
      if (role_at(plan.value(), i) != Role::measured) continue;
      // The same form may be both parts, so parts are told apart by position: the smooth round-robin
      // order (A B A for 2:1) repeats every wa+wb measured instructions.
      const int pos = int(mi % size_t(c.wa + c.wb));
      std::vector<int> order;
      {
        int cur[2] = {0, 0}, total = c.wa + c.wb, w[2] = {c.wa, c.wb};
        for (int s = 0; s < total; ++s) {
          cur[0] += w[0];
          cur[1] += w[1];
          int best = cur[1] > cur[0] ? 1 : 0;
          cur[best] -= total;
          order.push_back(best);
        }
      }
      const int p = order[size_t(pos)];
      CHECK(body[i].id == (p == 0 ? fa->id : fb->id));
      part[i] = p;
      ordinal[i] = seen[p]++;
      pattern += char('A' + p);
      ++mi;
    }
    // The asked ratio, exactly, over the whole body.
    CHECK(seen[0] * c.wb == seen[1] * c.wa);
    const int per_part[2] = {seen[0], seen[1]};
    // A part that only writes its whole destination rotates through kWholeWriteChains when unlimited.
    auto chains_of = [&](int limit, int w, const x86::InstForm& f) {
      if (limit > 0) return std::min(limit, w * rounds);
      return x86::writes_whole_destination(f) ? std::min(x86::kWholeWriteChains, w * rounds) : w * rounds;
    };
    const int chains[2] = {chains_of(c.la, c.wa, fa.value()), chains_of(c.lb, c.wb, fb.value())};
    CHECK(plan->chains == chains[0] + chains[1]);
    for (size_t i = 0; i < body.size(); ++i) {
      if (part[i] < 0) continue;
      for (const auto& reg : body[i].reads) {
        int w = reaching_writer(body, i, reg);
        if (w < 0 || part[size_t(w)] < 0) continue;
        // Only the same part's same chain feeds an instance: never the other part. Instance k of a
        // copy is on chain k mod chains; the writer is the chain's instance before it, across copies.
        CHECK(part[size_t(w)] == part[i]);
        const int n = per_part[part[i]];
        const int per_copy = n / copies;
        auto chain_of = [&](int ord) { return (ord % per_copy) % chains[part[i]]; };
        int expected = ordinal[i];
        do expected = (expected - 1 + n) % n;
        while (chain_of(expected) != chain_of(ordinal[i]));
        CHECK(ordinal[size_t(w)] == expected);
      }
    }
  }
}

namespace {
// Buffer offsets of the memory operands of the loop body's instructions, in order.
std::vector<int64_t> body_memory_offsets(const peakprobe::x86::StreamPlan& plan, int copies) {
  using namespace asmjit;
  EmittedStream emitted(plan, copies);
  asmjit::x86::Builder& b = emitted.b;
  std::vector<int64_t> out;
  bool in_loop = false;
  for (BaseNode* n = b.firstNode(); n; n = n->next()) {
    if (n->isLabel()) in_loop = true;
    if (!in_loop || !n->isInst()) continue;
    InstNode* in = n->as<InstNode>();
    if (in->id() == asmjit::x86::Inst::kIdDec) break;
    for (uint32_t i = 0; i < in->opCount(); ++i)
      if (in->op(i).isMem()) out.push_back(in->op(i).as<asmjit::x86::Mem>().offset());
  }
  return out;
}
}  // namespace

TEST_CASE("read-modify-write streams give every copy lines of its own, loads keep theirs", "[emitter]") {
  auto rmw = x86::resolve_inst("add m64, r64");
  REQUIRE(rmw.ok());
  auto plan = x86::plan_throughput(rmw.value(), 4, full_isa(), "-");
  REQUIRE(plan.ok());
  CHECK(plan->memory_stride_per_copy > 0);
  const auto offsets = body_memory_offsets(plan.value(), 8);
  REQUIRE(offsets.size() == 32);
  // 4 chains x 8 copies: 32 distinct cache lines, all inside the L1-resident span.
  std::set<int64_t> lines;
  for (int64_t o : offsets) {
    CHECK(o % 64 == 0);
    CHECK(o >= 0);
    CHECK(o < x86::kMemorySpreadBytes);
    lines.insert(o / 64);
  }
  CHECK(lines.size() == 32);

  // A load forms no chain through memory: every chain of every copy reads the form's one line (see
  // lines_for_chains in stream_plan.cpp), its loads taking turns over the 8 places of 8 bytes there.
  auto load = x86::resolve_inst("add r64, m64");
  REQUIRE(load.ok());
  auto lplan = x86::plan_throughput(load.value(), 4, full_isa(), "-");
  REQUIRE(lplan.ok());
  CHECK(lplan->memory_stride_per_copy == 0);
  const auto loffsets = body_memory_offsets(lplan.value(), 8);
  CHECK(loffsets.size() == 32);
  const std::set<int64_t> lline(loffsets.begin(), loffsets.end());
  CHECK(lline.size() == 8);
  CHECK(*lline.rbegin() - *lline.begin() == 56);
  CHECK(*lline.begin() % 64 == 0);
}

namespace {
// Whether consecutive loads in `offsets` never repeat the place of the one before.
bool never_twice_in_a_row(const std::vector<int64_t>& offsets) {
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] == offsets[i - 1]) return false;
  return true;
}
}  // namespace

TEST_CASE("loads take turns over the aligned places of their line, across copies too, and stores and full lines do not",
          "[emitter]") {
  // The buffer offsets of a throughput stream of `text` on `chains` chains, `copies` copies.
  auto offsets_of = [](const char* text, int chains, const char* dtype, int copies) {
    auto form = x86::resolve_inst(text);
    REQUIRE(form.ok());
    auto plan = x86::plan_throughput(form.value(), chains, full_isa(), dtype);
    REQUIRE(plan.ok());
    return body_memory_offsets(plan.value(), copies);
  };
  auto distinct = [](const std::vector<int64_t>& v) { return std::set<int64_t>(v.begin(), v.end()).size(); };
  // One chain: every instance in a copy is the same, so the copies themselves must move on (a core
  // may read one address at 2 a cycle where it reads a line at 3).
  CHECK(offsets_of("vaddps ymm, ymm, m256", 1, "f32", 6) == std::vector<int64_t>{0, 32, 0, 32, 0, 32});
  // Three chains of 16-byte loads, 5 copies: places 0, 16, 32, 48 in turn, every one aligned.
  const auto three = offsets_of("vpaddd xmm, xmm, m128", 3, "i32", 5);
  REQUIRE(three.size() == 15);
  for (size_t i = 0; i < three.size(); ++i) CHECK(three[i] == int64_t(16 * (i % 4)));
  // A broadcast reads its element, not the vector: 8 places of 8 bytes for a 4-byte element.
  const auto bcst = offsets_of("vfmadd231ps zmm, zmm, m32bcst", 2, "f32", 6);
  CHECK(distinct(bcst) == 8);
  CHECK(never_twice_in_a_row(bcst));
  // A full-line load has one place; a place past it would split lines.
  CHECK(distinct(offsets_of("vaddps zmm, zmm, m512", 2, "f32", 4)) == 1);
  // Stores keep one address: they commit at the full rate there, and slower over a line's places.
  CHECK(distinct(offsets_of("vmovups m256, ymm", 2, "f32", 4)) == 1);
  // Every place is aligned to the load's size and inside its line, whatever the size: a 10-byte x87
  // load takes places 16 bytes apart, a 4-byte broadcast places of 8 bytes.
  auto check_in_line = [](const std::vector<int64_t>& offsets, int bytes, int align) {
    for (int64_t o : offsets) {
      CHECK(o % align == 0);
      CHECK(o % 64 + bytes <= 64);
    }
  };
  check_in_line(bcst, 4, 8);
  const auto x87 = offsets_of("fld m80", 1, "f64", 8);
  REQUIRE(x87.size() == 8);
  check_in_line(x87, 10, 16);
  CHECK(distinct(x87) == 4);
  // Cache control names a line, whatever size its text spells: it stays put even on one chain.
  CHECK(distinct(offsets_of("clflush m8", 1, "-", 4)) == 1);
  // A load beside a read-modify-write part: every copy moves on to lines of its own, and inside
  // them the load still takes its turns.
  auto rmw = x86::resolve_inst("add m64, r64");
  auto ld = x86::resolve_inst("vaddps ymm, ymm, m256");
  REQUIRE(rmw.ok());
  REQUIRE(ld.ok());
  auto both = x86::plan_mix({{&rmw.value(), 1}, {&ld.value(), 1}}, 1, full_isa(), "f32");
  REQUIRE(both.ok());
  REQUIRE(both->memory_stride_per_copy > 0);
  // In order: each copy's read-modify-write, then its load.
  const auto all = body_memory_offsets(both.value(), 4);
  REQUIRE(all.size() == 8);
  std::vector<int64_t> loads;
  for (size_t i = 1; i < all.size(); i += 2) loads.push_back(all[i]);
  REQUIRE(loads.size() == 4);
  std::set<int64_t> load_lines;
  for (size_t c = 0; c < loads.size(); ++c) {
    load_lines.insert(loads[c] / 64);
    CHECK(loads[c] % 64 == int64_t(32 * (c % 2)));
  }
  CHECK(load_lines.size() == 4);
  // A divide by memory reads its constant 1, not the buffer: it stays put.
  auto div = x86::resolve_inst("div m64");
  REQUIRE(div.ok());
  auto dplan = x86::plan_throughput(div.value(), 1, full_isa(), "i64");
  REQUIRE(dplan.ok());
  for (const auto& p : dplan->copy) CHECK(p.line_step == 0);
}

TEST_CASE("call streams: every call goes to a lone ret after the function", "[emitter]") {
  auto call = peakprobe::x86::resolve_inst("call rel32");
  auto ret = peakprobe::x86::resolve_inst("ret");
  REQUIRE(call.ok());
  REQUIRE(ret.ok());
  auto plan = peakprobe::x86::plan_mix({{&call.value(), 1}, {&ret.value(), 1}}, 2, full_isa(), "-");
  REQUIRE(plan.ok());
  EmittedStream emitted(plan.value(), 4);
  asmjit::x86::Builder& b = emitted.b;
  // The body: 8 calls to one label; after the function's own ret, that label and a ret.
  std::set<uint32_t> targets;
  int calls = 0, rets = 0;
  uint32_t stub = asmjit::Globals::kInvalidId;
  for (asmjit::BaseNode* n = b.firstNode(); n; n = n->next()) {
    if (n->isInst()) {
      asmjit::InstNode* in = n->as<asmjit::InstNode>();
      if (in->id() == asmjit::x86::Inst::kIdCall) {
        ++calls;
        REQUIRE(in->op(0).isLabel());
        targets.insert(in->op(0).id());
      }
      if (in->id() == asmjit::x86::Inst::kIdRet) ++rets;
    }
    if (n->isLabel() && rets == 1 && stub == asmjit::Globals::kInvalidId) stub = n->as<asmjit::LabelNode>()->labelId();
  }
  CHECK(calls == 8);
  CHECK(rets == 2);  // the function's and the stub's
  REQUIRE(targets.size() == 1);
  CHECK(*targets.begin() == stub);
  // It assembles and links: the function is callable code.
  auto fn = peakprobe::x86::compile_stream(plan.value(), 4, full_isa());
  CHECK(fn.ok());
}

TEST_CASE("transaction streams: each xbegin falls back to just after its own xend", "[emitter]") {
  auto xbegin = peakprobe::x86::resolve_inst("xbegin rel32");
  auto xend = peakprobe::x86::resolve_inst("xend");
  REQUIRE(xbegin.ok());
  REQUIRE(xend.ok());
  auto plan = peakprobe::x86::plan_mix({{&xbegin.value(), 1}, {&xend.value(), 1}}, 2, full_isa(), "-");
  REQUIRE(plan.ok());
  EmittedStream emitted(plan.value(), 3);
  asmjit::x86::Builder& b = emitted.b;
  // In the body: xbegin L, xend, L: six times, each with its own label (an abort, which jumps to
  // L, never reaches an xend outside a transaction; a commit goes on to the same place).
  std::set<uint32_t> fallbacks;
  int begins = 0, ends = 0;
  uint32_t pending = asmjit::Globals::kInvalidId;
  bool after_end = false;
  for (asmjit::BaseNode* n = b.firstNode(); n; n = n->next()) {
    if (n->isInst()) {
      asmjit::InstNode* in = n->as<asmjit::InstNode>();
      if (in->id() == asmjit::x86::Inst::kIdXbegin) {
        ++begins;
        CHECK(pending == asmjit::Globals::kInvalidId);
        REQUIRE(in->op(0).isLabel());
        pending = in->op(0).id();
        fallbacks.insert(pending);
        after_end = false;
      } else if (in->id() == asmjit::x86::Inst::kIdXend) {
        ++ends;
        CHECK(pending != asmjit::Globals::kInvalidId);
        after_end = true;
      }
    }
    if (n->isLabel() && pending != asmjit::Globals::kInvalidId && n->as<asmjit::LabelNode>()->labelId() == pending) {
      CHECK(after_end);  // bound right after the xend
      pending = asmjit::Globals::kInvalidId;
    }
  }
  CHECK(begins == 6);
  CHECK(ends == 6);
  CHECK(fallbacks.size() == 6);
  CHECK(pending == asmjit::Globals::kInvalidId);
  auto fn = peakprobe::x86::compile_stream(plan.value(), 3, full_isa());
  CHECK(fn.ok());
}

TEST_CASE("hw: multiplies and divides of every width, gathers, scatters and calls run without a fault",
          "[hw][emitter]") {
  // Each of these once died of #DE (a divisor of ax or dx, an 8-bit quotient that overflowed, a
  // memory divisor read from pointer words) or #UD (an AVX-512 gather or scatter without a mask);
  // calls were refused. A call stream that lost its way would crash, not return an error row. An xend
  // outside a transaction faults (#GP): on a CPU with RTM, xend once read "memory fault".
  int measured = 0;
  for (const char* text : {"div r8", "idiv r8", "div r16", "idiv r16", "div m8", "idiv m16", "idiv m32", "idiv m64",
                           "mul r8", "imul m16", "mul r16", "fxrstor m", "vgatherdpd xmm, vm32x",
                           "vpgatherdd zmm, vm32z", "vpscatterdd vm32z, zmm", "vscatterqpd vm64y, ymm",
                           "call rel32", "call r64", "call m64", "ret", "xbegin rel32", "xend"}) {
    ProbeSpec spec;
    spec.text = text;
    ProbeResult r = test::shared_runner().run(spec);
    INFO(text << ": " << to_string(r.status) << " " << r.reason << " / " << r.latency_method);
    CHECK(r.status != Status::error);
    if (r.status == Status::skipped) continue;  // a feature this CPU lacks
    ++measured;
    CHECK(r.recip_throughput_cycles);
    const std::string t = text;
    if (t.rfind("div", 0) == 0 || t.rfind("idiv", 0) == 0 || t.rfind("mul", 0) == 0) CHECK(r.latency_cycles);
  }
  if (measured == 0) PP_SKIP("no form of the list runs on this CPU");
}

namespace {

// The machine code of a throughput plan of `chains` chains at `copies` copies.
std::string throughput_code(const char* text, int chains, int copies) {
  auto f = x86::resolve_inst(text);
  REQUIRE(f.ok());
  auto plan = x86::plan_throughput(f.value(), chains, x86::HostIsa{}, "-");
  REQUIRE(plan.ok());
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kX64));
  asmjit::x86::Assembler a(&code);
  REQUIRE(x86::emit_stream_function(*a.as<asmjit::x86::Emitter>(), *plan, copies, x86::HostIsa{}) == asmjit::kErrorOk);
  const auto& buf = code.textSection()->buffer();
  return std::string(reinterpret_cast<const char*>(buf.data()), buf.size());
}

}  // namespace

TEST_CASE("branches: each goes on to the next branch, in the encoding its form names", "[emitter]") {
  // Machine code of a two-branch plan at three copies: six branches. One not taken has displacement
  // zero; a taken one jumps over zeros to the next 32-byte boundary (the loop starts on one), where
  // the next branch starts.
  auto code_of = [](const char* text) { return throughput_code(text, 2, 3); };
  auto count = [](const std::string& hay, const std::string& needle) {
    int n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
  };
  CHECK(count(code_of("jmp rel8"), std::string("\xEB\x1E", 2) + std::string(30, '\0') + "\xEB") == 5);
  CHECK(count(code_of("jmp rel8"), std::string("\xEB\x1E", 2)) == 6);
  CHECK(count(code_of("jmp rel32"), std::string("\xE9\x1B\x00\x00\x00", 5)) == 6);
  CHECK(count(code_of("jnz rel32"), std::string("\x0F\x85\x1A\x00\x00\x00", 6)) == 6);
  CHECK(count(code_of("jz rel8"), std::string("\x74\x00", 2)) == 6);
  CHECK(count(code_of("jz rel32"), std::string("\x0F\x84\x00\x00\x00\x00", 6)) == 6);
  // The flags every branch sees come from `cmp rdi, 0` before the loop (REX.W 83 /7 ib).
  CHECK(count(code_of("jz rel8"), std::string("\x48\x83\xFF\x00", 4)) == 1);
}

TEST_CASE("x87: a stream on the stack top loads 1.0 into st(0) once, before its loop", "[emitter]") {
  auto code_of = [](const char* text) { return throughput_code(text, 1, 4); };
  const std::string fld1("\xD9\xE8", 2), fsqrt("\xD9\xFA", 2);
  const std::string sqrt_code = code_of("fsqrt");
  CHECK(sqrt_code.find(fld1) != std::string::npos);
  CHECK(sqrt_code.find(fld1) == sqrt_code.rfind(fld1));      // once
  CHECK(sqrt_code.find(fld1) < sqrt_code.find(fsqrt));       // before the stream
  CHECK(code_of("add r64, r64").find(fld1) == std::string::npos);
}

// A branch whose direction never changes is predicted after the first iterations; one that flipped
// would pay a misprediction on many of them. The bar is the machine's own unconditional jump of the
// same length: never mispredicted, so a conditional branch whose flags hold costs no more than it
// (taken) or less (not taken). Not a fixed cycle count: a stream of taken branches runs at the front
// end's rate of taken branches, 0.5-2 cycles on a Zen 4, 1.0 on a Zen 3 (packed 2 bytes apart, before
// the targets moved to 32-byte boundaries: about 7.5 on a Sapphire Rapids-class VM, and on the Zen 3
// `jmp rel8` 11.2 against `jnz rel8` 18, which this test caught).
// A stream of branches runs at the front end's rate, which depends on where the branches and their
// targets fall: on the Zen 5 VM `jmp rel32` and `jge rel32` were mistrusted in most runs for "code
// lengths disagree" (their layouts 3-15% apart), others for "N and 2N copies disagree" (the longer
// code ran faster a copy), and the test skipped on every run. Such a doubt moves
// a figure by far less than the bar's slack (a quarter and half a cycle), while a misprediction costs
// 10-20 cycles a branch: the test uses a figure doubted for code layout alone. Any other doubt (a
// busy core, a moving clock) in three attempts skips it.
namespace {
bool doubted_for_layout_only(const ProbeResult& r) {
  if (r.status != Status::mistrusted || !r.recip_throughput_cycles) return false;
  std::string reason = r.reason;
  if (auto at = reason.rfind(" ("); at != std::string::npos && reason.find("attempt", at) != std::string::npos)
    reason.erase(at);  // the trailing "(N attempts)"
  for (size_t from = 0; from <= reason.size();) {
    size_t end = reason.find("; ", from);
    if (end == std::string::npos) end = reason.size();
    const std::string doubt = reason.substr(from, end - from);
    if (doubt.rfind("code lengths disagree", 0) != 0 && doubt.rfind("timings of the same stream disagree", 0) != 0 &&
        doubt.rfind("N and 2N copies disagree", 0) != 0)
      return false;
    from = end + 2;
  }
  return true;
}

// A branch form's cycles: the first `ok` figure of three attempts, else one doubted for code layout
// only; nullopt (with the last reason) when every attempt had another doubt.
std::optional<double> branch_cycles(const std::string& text, std::string& why) {
  std::optional<double> layout_doubted;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ProbeResult r = test::measure_form(text);
    REQUIRE(r.status != Status::error);
    REQUIRE_FALSE(r.latency_cycles);
    REQUIRE(r.latency_method.find("throughput only") != std::string::npos);
    if (r.status == Status::ok && r.recip_throughput_cycles) return *r.recip_throughput_cycles;
    if (!layout_doubted && doubted_for_layout_only(r)) layout_doubted = *r.recip_throughput_cycles;
    why = text + " stayed mistrusted: " + r.reason;
  }
  return layout_doubted;
}
}  // namespace

TEST_CASE("branch figures doubted for code layout alone are told apart from other doubts", "[emitter]") {
  ProbeResult r;
  r.status = Status::mistrusted;
  r.recip_throughput_cycles = 0.64;
  r.reason = "code lengths disagree: a line through all of them is 3.3% off the figure (an effect of one code "
             "size, not of the instruction); timings of the same stream disagree (the nearest to the figure differs "
             "by 7%) (4 attempts)";
  CHECK(doubted_for_layout_only(r));
  r.reason = "code lengths disagree: a line through all of them is 8.8% off the figure (4 attempts)";
  CHECK(doubted_for_layout_only(r));
  r.reason = "N and 2N copies disagree (implied loop overhead -4.2%) (4 attempts)";
  CHECK(doubted_for_layout_only(r));
  r.reason = "code lengths disagree: 3.3% off; the core ran slowed in 40 of 40 samples (30% slower) (4 attempts)";
  CHECK_FALSE(doubted_for_layout_only(r));
  r.reason = "the clock moved by 5.0% during its timing (4 attempts)";
  CHECK_FALSE(doubted_for_layout_only(r));
  r.reason = "code lengths disagree: 3.3% off";
  r.recip_throughput_cycles.reset();  // no figure to use
  CHECK_FALSE(doubted_for_layout_only(r));
  r.recip_throughput_cycles = 0.64;
  r.status = Status::ok;  // not doubted at all: not this helper's case
  CHECK_FALSE(doubted_for_layout_only(r));
}

TEST_CASE("hw: branches whose direction the flags hold never pay a misprediction", "[hw][emitter]") {
  for (const char* width : {"rel8", "rel32"}) {
    std::string why;
    const std::optional<double> jump = branch_cycles(std::string("jmp ") + width, why);
    if (!jump) PP_SKIP(why);
    for (const char* cc : {"jz", "jnz", "jl", "jge"}) {
      const std::string text = std::string(cc) + " " + width;
      const std::optional<double> cycles = branch_cycles(text, why);
      if (!cycles) PP_SKIP(why);
      INFO(text << ": " << *cycles << " cycles, jmp " << width << ": " << *jump);
      // A misprediction costs 10-20 cycles: a branch mispredicted even one time in five pays 2-4
      // cycles more than the jump. Taken branches of one stream cost more in some layouts than in
      // others: on the Zen 5 VM `jnz rel32` read 1.23 and 1.46 cycles, `ok`, in 2 of 8 runs (jmp
      // 0.50-0.61), 0.5 in the rest; the bar leaves room for that, and none for a branch mispredicted
      // one time in five or more (wrong flags: about every other time).
      CHECK(*cycles <= *jump * 2 + 1);
    }
  }
}

namespace {

// The instruction ids of the function a plan of `text` emits (latency: one chain; else `chains`).
std::multiset<uint32_t> emitted_ids(const char* text, bool latency, int chains = 2) {
  auto form = peakprobe::x86::resolve_inst(text);
  REQUIRE(form.ok());
  auto plan = latency ? peakprobe::x86::plan_latency(form.value(), full_isa(), "f32")
                      : peakprobe::x86::plan_throughput(form.value(), chains, full_isa(), "f32");
  REQUIRE(plan.ok());
  EmittedStream emitted(plan.value(), 2);
  asmjit::x86::Builder& b = emitted.b;
  std::multiset<uint32_t> ids;
  for (asmjit::BaseNode* n = b.firstNode(); n; n = n->next())
    if (n->isInst()) ids.insert(n->as<asmjit::InstNode>()->id());
  return ids;
}

}  // namespace

// The save and restore of the floating-point state are microcoded instructions whose cost moved
// with the code before them by hundreds of cycles a call: only streams that can change that state
// pay them, and the clock's reference chains (general-purpose adds and multiplies) never do.
TEST_CASE("general-purpose streams leave the floating-point state alone and others save and restore it", "[emitter]") {
  namespace Inst = asmjit::x86::Inst;
  const uint32_t fp_state[] = {Inst::kIdStmxcsr, Inst::kIdLdmxcsr, Inst::kIdFnstcw, Inst::kIdFldcw,
                               Inst::kIdFnclex,  Inst::kIdEmms,    Inst::kIdVzeroupper};
  auto saves_fp_state = [&](const std::multiset<uint32_t>& ids) {
    // (emms and vzeroupper streams have their own besides the epilogue's)
    return ids.count(Inst::kIdStmxcsr) == 1 && ids.count(Inst::kIdFnstcw) == 1 && ids.count(Inst::kIdFldcw) == 1 &&
           ids.count(Inst::kIdEmms) >= 1 && ids.count(Inst::kIdVzeroupper) >= 1;
  };
  auto touches_fp_state = [&](const std::multiset<uint32_t>& ids) {
    return std::any_of(std::begin(fp_state), std::end(fp_state), [&](uint32_t id) { return ids.count(id) > 0; });
  };
  auto sets_up_vectors = [](const std::multiset<uint32_t>& ids) {
    return ids.count(Inst::kIdMovdqu) + ids.count(Inst::kIdVmovdqu) + ids.count(Inst::kIdVmovdqu64) +
               ids.count(Inst::kIdKxnorq) + ids.count(Inst::kIdKxnorw) > 0;
  };
  SECTION("the reference chains and a general-purpose throughput stream: none of it, no cld either") {
    for (const auto& [text, latency] : std::vector<std::pair<const char*, bool>>{
             {"add r64, r64", true}, {"imul r64, r64", true}, {"add r64, r64", false}, {"popcnt r64, r64", false},
             {"mov r64, m64", false}}) {
      INFO(text << (latency ? " latency" : " throughput"));
      const auto ids = emitted_ids(text, latency);
      CHECK_FALSE(touches_fp_state(ids));
      CHECK_FALSE(sets_up_vectors(ids));
      CHECK(ids.count(Inst::kIdCld) == 0);
    }
  }
  SECTION("a stream that can set the direction flag clears it on the way out") {
    const auto ids = emitted_ids("std", false, 1);
    CHECK(ids.count(Inst::kIdCld) == 1);
    CHECK_FALSE(touches_fp_state(ids));
  }
  SECTION("vector, x87 and mask streams, and general-purpose forms that load that state, keep the save") {
    for (const char* text : {"addps xmm, xmm", "vfmadd231ps zmm, zmm, zmm", "fsqrt", "kmovw r32, k",
                             "vmovd r32, xmm", "ldmxcsr m32", "xrstor m", "fxsave m", "xsave m", "emms", "vzeroupper"}) {
      INFO(text);
      const auto ids = emitted_ids(text, false, 1);
      CHECK(saves_fp_state(ids));
      CHECK(ids.count(Inst::kIdCld) == 0);  // none of them can set the direction flag
    }
  }
}

TEST_CASE("general registers are set up by moves a Golden Cove renamer does not keep as folded constants",
          "[emitter]") {
  // A 64-bit move of a sign-extended 32-bit immediate (REX.W C7) made `shl r64, cl` read 3 cycles of
  // latency on the Emerald Rapids VM where 1 is true: no stream may set a register that way.
  auto is_folded_constant_move = [](asmjit::BaseNode* n) {
    if (!n->isInst()) return false;
    auto* in = n->as<asmjit::InstNode>();
    if (in->id() != asmjit::x86::Inst::kIdMov || in->opCount() != 2) return false;
    const asmjit::Operand& dst = in->op(0);
    const asmjit::Operand& src = in->op(1);
    return dst.isReg() && dst.as<asmjit::x86::Reg>().isGpq() && src.isImm() &&
           asmjit::Support::isInt32(src.as<asmjit::Imm>().value());
  };
  auto count = [&](const x86::StreamPlan& plan, uint32_t inst_id) {
    EmittedStream s(plan, 2);
    int folded = 0, of_id = 0;
    for (asmjit::BaseNode* n = s.b.firstNode(); n; n = n->next()) {
      if (is_folded_constant_move(n)) ++folded;
      if (n->isInst() && n->as<asmjit::InstNode>()->id() == inst_id) ++of_id;
    }
    return std::make_pair(folded, of_id);
  };
  const auto isa = full_isa();
  for (const char* text : {"shl r64, cl", "shlx r64, r64, r64", "add r64, r64", "div r64", "mov r64, m64"}) {
    INFO(text);
    auto form = x86::resolve_inst(text);
    REQUIRE(form.ok());
    for (bool latency : {false, true}) {
      auto plan = latency ? x86::plan_latency(form.value(), isa, "f32") : x86::plan_throughput(form.value(), 4, isa, "f32");
      if (!plan.ok()) continue;  // a form without a latency chain
      CHECK(count(plan.value(), asmjit::x86::Inst::kIdMov).first == 0);
    }
  }
  SECTION("a negative 32-bit value is sign-extended from a 32-bit move, a wider one is a 64-bit immediate") {
    auto form = x86::resolve_inst("add r64, r64");
    REQUIRE(form.ok());
    auto plan = x86::plan_throughput(form.value(), 4, isa, "f32");
    REQUIRE(plan.ok());
    plan->inits.push_back({x86::OpClass::gp, asmjit::x86::Gp::kIdR14, x86::InitKind::gp_value, uint64_t(-16)});
    plan->inits.push_back({x86::OpClass::gp, asmjit::x86::Gp::kIdR15, x86::InitKind::gp_value, 0x123456789ull});
    const auto [folded, movsxd] = count(plan.value(), asmjit::x86::Inst::kIdMovsxd);
    CHECK(folded == 0);
    CHECK(movsxd == 1);
  }
}

TEST_CASE("set_gp leaves exactly the value asked for in the whole 64-bit register", "[emitter]") {
  // Each way set_gp encodes a value (32-bit move, 32-bit move then movsxd, movabs), run: a wrong
  // extension would leave the upper half zero or set where it must not be.
  for (uint64_t value : {uint64_t(0), uint64_t(1), uint64_t(0x7fffffff), uint64_t(0x80000000), uint64_t(0xffffffff),
                         uint64_t(-1), uint64_t(-16), uint64_t(int64_t(INT32_MIN)), uint64_t(int64_t(INT32_MIN) - 1),
                         uint64_t(0x100000000ull), uint64_t(0x123456789abcdef0ull), uint64_t(0x8000000000000000ull)}) {
    INFO("value 0x" << std::hex << value);
    isa::HostCode code;
    asmjit::x86::Assembler e(code.holder());
    e.mov(asmjit::x86::rax, asmjit::Imm(int64_t(0x5a5a5a5a5a5a5a5all)));  // a value none of them is
    x86::set_gp(*e.as<asmjit::x86::Emitter>(), asmjit::x86::Gp::kIdAx, value);
    e.ret();
    auto fn = code.finish();
    REQUIRE(fn.ok());
    CHECK(fn->as<uint64_t (*)()>()() == value);
  }
}
