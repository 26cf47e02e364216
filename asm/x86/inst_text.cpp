#include "asm/x86/inst_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace peakprobe::x86 {
namespace {

std::string lower_trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool parse_bits(std::string_view digits, int& bits) {
  if (digits.empty() || digits.size() > 3) return false;
  int v = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  bits = v;
  return true;
}

// Registers that may be written literally as operands (implicit or fixed operands in the manuals).
constexpr std::array<std::string_view, 20> kFixedRegs = {
    "al", "cl", "dl", "ax", "cx", "dx", "eax", "ecx", "edx", "rax", "rcx", "rdx",
    "xmm0", "k0", "rbx", "ebx", "rsi", "rdi", "esi", "edi"};

int fixed_reg_bits(std::string_view r) {
  if (r.starts_with("xmm")) return 128;
  if (r == "k0") return 64;
  if (r.size() == 2 && (r[1] == 'l')) return 8;
  if (r.size() == 2) return 16;
  return r[0] == 'e' ? 32 : 64;
}

}  // namespace

Expected<OperandKind> parse_operand_kind(const std::string& token) {
  std::string t = lower_trim(token);
  OperandKind k;
  // "{k}" merge-mask suffix, written "zmm {k}" or "zmm{k}".
  if (auto p = t.find('{'); p != std::string::npos) {
    std::string suffix = lower_trim(std::string_view(t).substr(p));
    if (suffix != "{k}") return make_error("unsupported operand decoration '" + suffix + "' (only {k})");
    k.merge_mask = true;
    t = lower_trim(std::string_view(t).substr(0, p));
  }
  int bits = 0;
  auto sv = std::string_view(t);
  if (t.empty()) return make_error("empty operand");
  if (sv.size() > 1 && sv[0] == 'r' && parse_bits(sv.substr(1), bits) &&
      (bits == 8 || bits == 16 || bits == 32 || bits == 64)) {
    k.cls = OpClass::gp;
    k.bits = bits;
  } else if (t == "xmm" || t == "ymm" || t == "zmm") {
    k.cls = OpClass::vec;
    k.bits = t == "xmm" ? 128 : t == "ymm" ? 256 : 512;
  } else if (t == "k") {
    k.cls = OpClass::mask;
    k.bits = 64;
  } else if (t == "tmm") {
    k.cls = OpClass::tile;
    k.bits = 8192;
  } else if (sv.starts_with("imm") && parse_bits(sv.substr(3), bits) &&
             (bits == 8 || bits == 16 || bits == 32)) {
    k.cls = OpClass::imm;
    k.bits = bits;
  } else if (sv.starts_with("rel") && parse_bits(sv.substr(3), bits) && (bits == 8 || bits == 32)) {
    k.cls = OpClass::imm;
    k.bits = bits;
    k.relative = true;
  } else if (t == "m" || t == "mem") {
    k.cls = OpClass::mem;
    k.bits = 0;
  } else if (sv.starts_with("vm") && sv.size() == 5 && parse_bits(sv.substr(2, 2), bits) &&
             (bits == 32 || bits == 64) && (sv[4] == 'x' || sv[4] == 'y' || sv[4] == 'z')) {
    k.cls = OpClass::vmem;
    k.index_elem_bits = bits;
    k.index_bits = sv[4] == 'x' ? 128 : sv[4] == 'y' ? 256 : 512;
  } else if (sv.starts_with("m") && sv.ends_with("bcst") &&
             parse_bits(sv.substr(1, sv.size() - 5), bits) && (bits == 16 || bits == 32 || bits == 64)) {
    k.cls = OpClass::mem;
    k.bcst_bits = bits;
  } else if (sv.starts_with("m") && parse_bits(sv.substr(1), bits) &&
             (bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 80 || bits == 128 ||
              bits == 256 || bits == 512)) {
    k.cls = OpClass::mem;
    k.bits = bits;
  } else if (std::find(kFixedRegs.begin(), kFixedRegs.end(), sv) != kFixedRegs.end()) {
    k.cls = OpClass::fixed;
    k.fixed = t;
    k.bits = fixed_reg_bits(sv);
  } else {
    return make_error("unknown operand kind '" + t +
                      "' (expected r8/r16/r32/r64, xmm/ymm/zmm, k, tmm, imm8/imm16/imm32, rel8/rel32, m8..m512, "
                      "m, m32bcst/m64bcst, vm32x..vm64z, or a fixed register such as cl)");
  }
  k.text = t + (k.merge_mask ? " {k}" : "");
  if (k.merge_mask && k.cls != OpClass::vec && k.cls != OpClass::vmem)
    return make_error("a {k} write mask applies to a vector register or a scatter's vm operand, not '" + t + "'");
  return k;
}

std::string InstText::canonical() const {
  std::string s = encoding.empty() ? "" : "{" + encoding + "} ";
  s += mnemonic;
  for (size_t i = 0; i < operands.size(); ++i) s += (i ? ", " : " ") + operands[i].text;
  return s;
}

Expected<InstText> parse_inst_text(const std::string& text) {
  InstText out;
  // The longest real form is under 60 characters. The cap keeps the nearest-name search (an edit
  // distance against every mnemonic) from running for minutes on a megabyte of text. It counts what
  // the text says, not its spacing: the canonical spelling adds a space after each comma, and a text
  // that parses must give a canonical spelling that parses again. Spacing alone is capped at four
  // times as much.
  const size_t said = size_t(std::count_if(text.begin(), text.end(), [](unsigned char c) { return !std::isspace(c); }));
  if (said > kMaxInstTextChars || text.size() > 4 * kMaxInstTextChars)
    return make_error("instruction text of " + std::to_string(said) + " characters (not counting spaces): at most " +
                      std::to_string(kMaxInstTextChars));
  std::string t = lower_trim(text);
  if (t.empty()) return make_error("empty instruction text");
  // Optional encoding prefix "{vex}" / "{evex}".
  if (t.front() == '{') {
    auto close = t.find('}');
    if (close == std::string::npos) return make_error("unterminated '{' in '" + text + "'");
    out.encoding = t.substr(1, close - 1);
    if (out.encoding != "vex" && out.encoding != "evex")
      return make_error("unknown encoding prefix '{" + out.encoding + "}' (use {vex} or {evex})");
    t = lower_trim(std::string_view(t).substr(close + 1));
  }
  size_t sp = 0;
  while (sp < t.size() && !std::isspace(static_cast<unsigned char>(t[sp]))) ++sp;
  out.mnemonic = t.substr(0, sp);
  if (out.mnemonic.empty()) return make_error("missing mnemonic in '" + text + "'");
  for (char c : out.mnemonic)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return make_error("'" + out.mnemonic + "' is not a mnemonic (letters and digits only)");
  std::string rest = lower_trim(std::string_view(t).substr(sp));
  if (rest.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = rest.find(',', start);
    std::string tok = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto kind = parse_operand_kind(tok);
    if (!kind) return make_error("operand " + std::to_string(out.operands.size() + 1) + " of '" + text +
                                 "': " + kind.error());
    out.operands.push_back(kind.value());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.operands.size() > 6) return make_error("too many operands in '" + text + "'");
  return out;
}

}  // namespace peakprobe::x86
