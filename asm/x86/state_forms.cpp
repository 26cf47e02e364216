#include "asm/x86/state_forms.hpp"

#include <algorithm>
#include <cstring>

namespace peakprobe::x86 {

namespace {

bool is_one_of(const std::string& m, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return m == n; });
}

bool starts_with(const std::string& m, const char* prefix) { return m.rfind(prefix, 0) == 0; }

// The width the stack moves by: a 16-bit operand pushes 2 bytes, everything else 8 in 64-bit mode.
bool sixteen_bit(const InstForm& f) {
  return !f.text.operands.empty() && f.text.operands[0].bits == 16;
}

}  // namespace

std::optional<Companion> balancing_companion(const InstForm& f) {
  const std::string& m = f.text.mnemonic;
  if (m == "push") return Companion{sixteen_bit(f) ? "pop r16" : "pop r64", false, "a pop after each push"};
  if (m == "pop") return Companion{sixteen_bit(f) ? "push r16" : "push r64", true, "a push before each pop"};
  if (m == "pushf") return Companion{"popf", false, "a popf after each pushf"};
  if (m == "pushfq") return Companion{"popfq", false, "a popfq after each pushfq"};
  // popf loads what the pushf before it saved: the flags stay as they were (no trap flag, DF clear).
  if (m == "popf") return Companion{"pushf", true, "a pushf before each popf"};
  if (m == "popfq") return Companion{"pushfq", true, "a pushfq before each popfq"};
  if (m == "std") return Companion{"cld", false, "a cld after each std"};
  if (m == "enter") return Companion{"leave", false, "a leave after each enter"};
  if (m == "leave") return Companion{"enter imm16, imm8", true, "an enter before each leave"};
  // A call returns at once through a ret at its target; a ret returns from a call made for it. The
  // return-stack predictor sees every pair matched, as in the code the forms come from.
  if (m == "call") return Companion{"ret", false, "a ret at the call's target"};
  if (m == "ret" && f.text.operands.empty()) return Companion{"call rel32", true, "a call to each ret"};
  // An empty transaction: an xend outside one faults, and an xbegin's fallback (taken on an abort) is
  // the instruction after its xend.
  if (m == "xbegin") return Companion{"xend", false, "an xend after each xbegin: empty transactions"};
  if (m == "xend") return Companion{"xbegin rel32", true, "an xbegin before each xend: empty transactions"};
  // x87 loads push onto a stack of 8 registers: a stream of them overflows it after 8, and on a Zen 3
  // each later `fld m32` took a microcode assist, 134 cycles where it runs at 1.0 with a pop beside
  // it. The pop stores to a line of its own (a mix gives each form its own lines), never the next
  // load's. (`fld1` and the like ran at 1.0 either way there; balanced all the same.)
  if (is_one_of(m, {"fld", "fild", "fbld", "fld1", "fldz", "fldpi", "fldl2e", "fldl2t", "fldlg2", "fldln2"}) &&
      std::none_of(f.text.operands.begin(), f.text.operands.end(), [](const auto& k) { return k.cls != OpClass::mem; }))
    return Companion{"fstp m64", false, "an fstp after each load: the x87 stack stays within its 8 registers"};
  return std::nullopt;
}

std::optional<std::string> refusal_reason(const InstForm& f) {
  const std::string& m = f.text.mnemonic;
  if (is_one_of(m, {"syscall", "sysenter", "sysexit", "sysexitq", "sysret", "sysretq", "int", "int1", "int3",
                    "into", "iret", "iretd", "iretq"}))
    return "'" + m + "' leaves the process for the kernel (a system call, trap or interrupt return): "
           "not measurable from user space";
  if (is_one_of(m, {"ud0", "ud1", "ud2"})) return "'" + m + "' is defined to raise an invalid-opcode fault";
  if (is_one_of(m, {"hlt", "cli", "sti", "clts", "lgdt", "lidt", "lldt", "ltr", "lmsw", "invd", "wbinvd",
                    "wbnoinvd", "invlpg", "invlpga", "invpcid", "rdmsr", "wrmsr", "swapgs", "xsetbv", "monitor",
                    "mwait", "monitorx", "mwaitx", "in", "out", "ins", "insb", "insw", "insd", "outs", "outsb",
                    "outsw", "outsd", "sysexit", "rsm", "smsw", "sldt", "str", "sgdt", "sidt", "invlpgb",
                    "tlbsync", "rdpmc", "clzero"}) ||
      (starts_with(m, "vm") && (m == "vmcall" || m == "vmlaunch" || m == "vmresume" || m == "vmxoff" ||
                               m == "vmxon" || m == "vmread" || m == "vmwrite" || m == "vmclear" ||
                               m == "vmptrld" || m == "vmptrst" || m == "vmrun" || m == "vmload" ||
                               m == "vmsave" || m == "vmmcall" || m == "vmfunc")))
    return "'" + m + "' is privileged or talks to devices or the hypervisor: not measurable from user space";
  if (is_one_of(m, {"clac", "stac", "xsaves", "xsaves64", "xrstors", "xrstors64", "wrussd", "wrussq"}))
    return "'" + m + "' runs in the kernel only (privilege level 0): not measurable from user space";
  if (is_one_of(m, {"incsspd", "incsspq", "rstorssp", "saveprevssp", "setssbsy", "clrssbsy", "wrssd", "wrssq"}))
    return "'" + m + "' works on a shadow stack, which the OS has not enabled for this process: it faults";
  if (is_one_of(m, {"lfs", "lgs", "lss"}))
    return "'" + m + "' loads a segment register from a far pointer: the process's segments are not the "
           "probe's to change";
  if (is_one_of(m, {"lcall", "ljmp", "lret"}))
    return "'" + m + "' is a far transfer of control through a segment selector: not measured as a single form";
  if (is_one_of(m, {"xlatb"})) return "'xlatb' reads memory at the implicit rbx + al, which the harness does not "
                                       "point at its buffer";
  if (is_one_of(m, {"xrstor", "xrstor64"}))
    return "'" + m + "' restores processor state from an XSAVE area with a valid header, which the probe buffer "
           "is not: it faults";
  if (m == "ldtilecfg")
    return "'ldtilecfg' loads a tile configuration from memory, which must be valid (palette, rows, bytes per "
           "row, zero reserved bytes) or it faults (#GP); the probe buffer holds data. The AMX forms load one "
           "themselves: measure 'tileloadd', 'tdpbf16ps' and the like";
  if (m == "movdir64b" && !f.text.operands.empty() && f.text.operands[0].cls == OpClass::mem)
    return "'movdir64b' takes its destination as an address in a register (es:[r64]), which a memory operand "
           "cannot name here";
  if (is_one_of(m, {"wrfsbase", "wrgsbase"}))
    return "'" + m + "' moves the thread's FS/GS base, which the C library's thread-local storage stands on";
  if (m == "call" && !f.text.operands.empty() && f.text.operands[0].cls == OpClass::imm && !f.text.operands[0].relative)
    return "'call imm32' is asmjit's spelling of 'call rel32' with an absolute target: measure 'call rel32'";
  if (m == "xbegin" && !f.text.operands.empty() && f.text.operands[0].cls == OpClass::imm && !f.text.operands[0].relative)
    return "'xbegin imm32' is asmjit's spelling of 'xbegin rel32' with an absolute fallback: measure 'xbegin rel32'";
  if (m == "ret" && !f.text.operands.empty())
    return "'ret imm16' pops bytes no call pushed: a balanced stream would need a push per return";
  if (m == "call" && !f.text.operands.empty() && f.text.operands[0].cls == OpClass::gp && f.text.operands[0].bits != 64)
    return "a call through a 16- or 32-bit register is not encodable in 64-bit mode";
  if (is_one_of(m, {"retf", "loop", "loope", "loopne", "jecxz", "jrcxz"}))
    return "'" + m + "' transfers control with a side effect or a far target: not measured as a single form";
  if (m.size() >= 2 && m[0] == 'j') {
    const bool relative = f.text.operands.size() == 1 && f.text.operands[0].cls == OpClass::imm;
    if (relative && !f.text.operands[0].relative)
      return "'" + m + " imm32' is asmjit's spelling of '" + m + " rel32' with an absolute target: measure '" + m +
             " rel32'";
    if (!relative)
      return "'" + f.display + "' jumps through a register or memory: each copy would need a target of its own; "
             "indirect jumps are not measured yet";
    if (is_one_of(m, {"jp", "jpe", "jnp", "jpo"}))
      return "'" + m + "' follows the parity flag, which the probe's loop counter leaves different from one "
             "iteration to the next: its direction cannot be held";
  }
  if (is_one_of(m, {"movs", "movsb", "movsw", "movsq", "stos", "stosb", "stosw", "stosd", "stosq", "lods",
                    "lodsb", "lodsw", "lodsd", "lodsq", "cmps", "cmpsb", "cmpsw", "cmpsq", "scas", "scasb",
                    "scasw", "scasd", "scasq"}) ||
      (m == "movsd" && f.text.operands.empty()) || (m == "cmpsd" && f.text.operands.empty()))
    return "string instructions move rsi/rdi, which hold the probe's buffer and loop counter";
  if (is_one_of(m, {"maskmovdqu", "vmaskmovdqu", "maskmovq"}))
    return "'" + m + "' stores through the implicit rdi, which holds the probe's loop counter";
  for (const auto& k : f.text.operands) {
    if (k.cls != OpClass::fixed) continue;
    const std::string& r = k.fixed;
    if (is_one_of(r.c_str(), {"rsp", "esp", "sp", "spl"}))
      return "'" + f.display + "' names the stack pointer, which the harness keeps: use push/pop forms";
    if (is_one_of(r.c_str(), {"rdi", "edi", "di", "dil", "rsi", "esi", "si", "sil"}))
      return "'" + f.display + "' names " + r + ", which holds the probe's loop counter or buffer: use r64 "
             "and the tool picks a free register";
    if (is_one_of(r.c_str(), {"fs", "gs"}))
      return "'" + f.display + "' names a segment register the C library's thread-local storage stands on";
  }
  return std::nullopt;
}

}  // namespace peakprobe::x86
