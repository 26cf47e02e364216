// The crash sweep with x86 texts that have hurt probers (tests/test_main_crash_sweep.cpp sweeps the
// catalog and the target's own forms bent out of shape): each goes through the real executable in a
// child process; none may kill it with a signal or hang it; a rejected text exits 2 with a message.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "cli_sweep.hpp"

using namespace peakprobe;

namespace {

// Texts that have hurt probers: stack, flags, control transfer, traps, privileged and I/O forms,
// state a harness relies on, the loop counter's registers, and malformed syntax.
std::vector<std::string> hostile_texts() {
  std::vector<std::string> t = {
      "pop r64", "pop r16", "pop m64", "push r64", "push imm8", "pushf", "popf", "popfq", "std", "cld",
      "enter imm16, imm8", "leave", "call r64", "call m64", "ret", "retf", "iret", "jmp r64", "syscall",
      "sysenter", "int3", "int imm8", "ud2", "hlt", "in al, dx", "out dx, al", "cli", "sti", "rdpmc",
      "wrfsbase r64", "wrgsbase r64", "rdfsbase r64", "xsetbv", "xrstor m", "fxrstor m", "xsave m",
      "ldmxcsr m32", "fldcw m16", "fninit", "vzeroall", "vzeroupper", "div r64", "idiv r32", "div r8",
      "xor rdi, rdi", "add rdi, imm8", "mov rsi, r64", "mov r64, rsp", "lea r64, m", "xchg r64, m64",
      "cmpxchg16b m128", "maskmovdqu xmm, xmm", "movbe r64, m64", "movhps xmm, m64", "clflush m8",
      "vgatherdps ymm, vm32y, ymm", "vpscatterdd vm32z {k}, zmm", "xbegin", "xabort imm8", "cpuid",
      "rdtsc", "rdrand r64", "pause", "mwait", "monitor", "tdpbf16ps tmm, tmm, tmm",
      // malformed
      "", " ", ",", ",,,", "add", "add ,", "add r64,", "add r64, r64,", "add r64 r64", "add r64,, r64",
      "{vex}", "{evex}", "{vex} add r64, r64", "{evex} {vex} vaddps ymm, ymm, ymm", "{k}",
      "vaddps zmm {k}, zmm, zmm", "vaddps zmm {z}, zmm, zmm", "add r64, r64 ; sub r64, r64", "ADD R64, R64",
      "add\tr64,\tr64", "add r64, m99999", "add r999, r64", "mov r64, imm64", "mov m64, imm99",
      "vaddps xmm, ymm, zmm", "lock add m64, r64", "rep movsb", "mov cr0, r64", "mov r64, fs",
      std::string(10000, 'a'), "add " + std::string(5000, 'r'), "add \xff\xfe, r64", "\xc3\x28 r64",
      "add r64, r64\n",
  };
  std::string many = "add r64";
  for (int i = 0; i < 300; ++i) many += ", r64";
  t.push_back(many);
  // Generated: mnemonics that change state or take odd operands, with random operand kinds.
  const std::vector<std::string> mnemonics = {
      "pop", "push", "add", "adc", "sbb", "rcl", "rcr", "shl", "shld", "div", "idiv", "mul", "imul", "mulx",
      "xchg", "cmpxchg", "bswap", "movbe", "lea", "mov", "movs", "stos", "lods", "scas", "cmps", "xlat",
      "lods", "loop", "jrcxz", "enter", "leave", "popf", "sahf", "lahf", "vzeroupper", "ldmxcsr", "stmxcsr",
      "vldmxcsr", "fldenv", "frstor", "fxsave", "vmaskmovps", "vpmaskmovd", "vgatherqpd", "vpcompressd",
      "kmovq", "vp2intersectd", "tileloadd", "ptwrite", "clwb", "prefetchw", "invd", "wbinvd", "rdmsr",
  };
  const std::vector<std::string> kinds = {"r8",  "r16", "r32",  "r64",  "xmm",  "ymm",     "zmm",     "k",
                                          "imm8", "imm16", "imm32", "m8", "m16", "m32", "m64", "m128",
                                          "m256", "m512", "m", "cl", "rax", "vm32x", "vm64y", "tmm",
                                          "m32bcst", "rdi", "rsp", "{k}", "", "x"};
  std::mt19937 rng(20261122);
  for (int i = 0; i < 120; ++i) {
    std::string text = mnemonics[rng() % mnemonics.size()];
    const int operands = int(rng() % 4);
    for (int j = 0; j < operands; ++j) text += (j == 0 ? " " : ", ") + kinds[rng() % kinds.size()];
    t.push_back(text);
  }
  return t;
}

}  // namespace

TEST_CASE("cli sweep: hostile instruction texts get a row or a clear refusal, never a crash or a hang",
          "[main][hw]") {
  for (const std::string& text : hostile_texts()) test::check_inst_survives(text);
}
