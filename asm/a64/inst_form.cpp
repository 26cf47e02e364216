#include "asm/a64/inst_form.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include <asmjit/arm.h>
#include <asmjit/arm/a64assembler.h>
#include <asmjit/arm/a64instdb.h>
#include <fmt/format.h>

namespace peakprobe::a64 {
using namespace asmjit;
namespace aj = asmjit::a64;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Splits at commas outside brackets and braces.
std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// "x", "x7", "xzr": the letter and an optional register number up to 31.
bool reg_name(const std::string& s, char letter) {
  if (s.empty() || s[0] != letter) return false;
  const std::string rest = s.substr(1);
  return rest.empty() || (rest.size() <= 2 && all_digits(rest) && std::stoi(rest) <= 31);
}

const std::map<std::string, uint8_t>& conditions() {
  using arm::CondCode;
  static const std::map<std::string, uint8_t> m = {
      {"eq", uint8_t(CondCode::kEQ)}, {"ne", uint8_t(CondCode::kNE)}, {"cs", uint8_t(CondCode::kCS)},
      {"hs", uint8_t(CondCode::kHS)}, {"cc", uint8_t(CondCode::kCC)}, {"lo", uint8_t(CondCode::kLO)},
      {"mi", uint8_t(CondCode::kMI)}, {"pl", uint8_t(CondCode::kPL)}, {"vs", uint8_t(CondCode::kVS)},
      {"vc", uint8_t(CondCode::kVC)}, {"hi", uint8_t(CondCode::kHI)}, {"ls", uint8_t(CondCode::kLS)},
      {"ge", uint8_t(CondCode::kGE)}, {"lt", uint8_t(CondCode::kLT)}, {"gt", uint8_t(CondCode::kGT)},
      {"le", uint8_t(CondCode::kLE)}};
  return m;
}

// "4s" -> ('s', 4 lanes, 128 bits).
bool parse_arrangement(const std::string& a, OpSpec& op) {
  static const std::map<std::string, std::pair<char, int>> kArr = {
      {"8b", {'b', 8}}, {"16b", {'b', 16}}, {"4h", {'h', 4}}, {"8h", {'h', 8}},
      {"2s", {'s', 2}}, {"4s", {'s', 4}},   {"1d", {'d', 1}}, {"2d", {'d', 2}}, {"1q", {'q', 1}}};
  auto it = kArr.find(a);
  if (it == kArr.end()) return false;
  op.elem = it->second.first;
  op.lanes = it->second.second;
  const int ebits = op.elem == 'b' ? 8 : op.elem == 'h' ? 16 : op.elem == 's' ? 32 : op.elem == 'd' ? 64 : 128;
  op.bits = ebits * op.lanes;
  return true;
}

// "v.4s", "v3.4s", "v.s[1]", "v.4b[0]".
Expected<OpSpec> parse_vector(const std::string& s) {
  OpSpec op;
  const auto dot = s.find('.');
  if (dot == std::string::npos || !reg_name(s.substr(0, dot), 'v'))
    return make_error("'" + s + "' is not a vector register (v.4s, v.s[1])");
  std::string rest = s.substr(dot + 1);
  const auto br = rest.find('[');
  if (br != std::string::npos) {
    const std::string index = rest.size() > br + 1 ? rest.substr(br + 1, rest.size() - br - 2) : "";
    if (rest.back() != ']' || !all_digits(index) || index.size() > 2)
      return make_error("'" + s + "': an element index is a number in brackets (v.s[1])");
    op.kind = OpKind::elem;
    op.index = std::stoi(index);
    const std::string t = rest.substr(0, br);
    if (t == "b" || t == "h" || t == "s" || t == "d") {
      op.elem = t[0];
      op.bits = t == "b" ? 8 : t == "h" ? 16 : t == "s" ? 32 : 64;
    } else if (t == "4b" || t == "2h") {
      op.elem = t[0];  // the dot products' 32-bit groups
      op.bits = 32;
    } else {
      return make_error("'" + s + "': element types are b, h, s, d, 4b, 2h");
    }
    // 128 bits hold 128/bits elements (asmjit would wrap a larger index silently).
    if (op.index >= 128 / op.bits)
      return make_error("'" + s + "': element index " + std::to_string(op.index) + " beyond the " +
                        std::to_string(128 / op.bits) + " elements of a vector");
    op.text = "v." + t + "[" + std::to_string(op.index) + "]";
    return op;
  }
  op.kind = OpKind::vec;
  if (!parse_arrangement(rest, op))
    return make_error("'" + s + "': arrangements are 8b 16b 4h 8h 2s 4s 1d 2d 1q");
  op.text = "v." + rest;
  return op;
}

bool is_imm_text(const std::string& s, int64_t& value, bool& given) {
  std::string t = s;
  if (!t.empty() && t[0] == '#') t = t.substr(1);
  if (t == "imm" || t.rfind("imm", 0) == 0) {
    given = false;
    return true;
  }
  // A number needs its '#'; hexadecimal up to 15 digits and decimal up to 18, so that no conversion
  // can overflow (no AArch64 immediate is anywhere near).
  if (s.empty() || s[0] != '#') return false;
  const bool neg = !t.empty() && t[0] == '-';
  const std::string digits = neg ? t.substr(1) : t;
  if (digits.size() > 2 && digits.rfind("0x", 0) == 0) {
    const std::string hex = digits.substr(2);
    if (hex.size() > 15 || !std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      return false;
    value = int64_t(std::stoull(hex, nullptr, 16)) * (neg ? -1 : 1);
    given = true;
    return true;
  }
  if (all_digits(digits) && digits.size() < 19) {
    value = std::stoll(digits) * (neg ? -1 : 1);
    given = true;
    return true;
  }
  return false;
}

Expected<OpSpec> parse_operand(const std::string& raw, int64_t& imm) {
  const std::string s = lower(trim(raw));
  OpSpec op;
  if (s.empty()) return make_error("an empty operand");
  if (s.front() == '{') {
    if (s.back() != '}') return make_error("'" + s + "': a register list ends with '}'");
    auto parts = split_top(s.substr(1, s.size() - 2));
    if (parts.empty() || parts.size() > 4) return make_error("'" + s + "': a list holds 1 to 4 registers");
    OpSpec first;
    for (const auto& p : parts) {
      auto v = parse_vector(p);
      if (!v) return make_error(v.error());
      if (v->kind != OpKind::vec) return make_error("'" + s + "': list elements are whole vectors (v.16b)");
      if (p == parts.front()) first = *v;
      else if (v->text != first.text) return make_error("'" + s + "': every register of a list has one arrangement");
    }
    op = first;
    op.kind = OpKind::list;
    op.count = int(parts.size());
    op.text = "{" + first.text;
    for (int i = 1; i < op.count; ++i) op.text += ", " + first.text;
    op.text += "}";
    return op;
  }
  if (s.front() == '[') {
    if (s.back() != ']') return make_error("'" + s + "': a memory operand ends with ']' (no write-back forms)");
    auto parts = split_top(s.substr(1, s.size() - 2));
    if (parts.empty() || !(reg_name(parts[0], 'x') || parts[0] == "sp"))
      return make_error("'" + s + "': the base of an address is an x register");
    op.kind = OpKind::mem;
    op.text = "[x";
    if (parts.size() >= 2) {
      int64_t v = 0;
      bool given = false;
      if (is_imm_text(parts[1], v, given)) {
        // The base is the start of the 64 KiB probe buffer: an offset must stay inside it.
        if (given && (v < 0 || v > 60000))
          return make_error("'" + s + "': an offset from 0 to 60000 (the probe buffer's base is the address)");
        op.mem_offset = true;
        op.offset_open = !given;
        imm = given ? v : 0;
        op.text += given ? ", #" + std::to_string(v) : ", #imm";
      } else if (reg_name(parts[1], 'x')) {
        op.mem_index = true;
        op.text += ", x";
      } else {
        return make_error("'" + s + "': an offset is #imm or an x register");
      }
    }
    if (parts.size() == 3) {
      const std::string sh = trim(parts[2]);
      if (!op.mem_index || sh.rfind("lsl", 0) != 0) return make_error("'" + s + "': only a register index takes 'lsl #n'");
      int64_t v = 0;
      bool given = false;
      if (!is_imm_text(trim(sh.substr(3)), v, given)) return make_error("'" + s + "': lsl takes #imm or #n");
      if (given && (v < 0 || v > 4)) return make_error("'" + s + "': an index shift is 0 to 4");
      op.mem_shift = given ? int(v) : -2;  // -2: the access size's shift, found when encoding
      op.text += given ? ", lsl #" + std::to_string(v) : ", lsl #imm";
    }
    if (parts.size() > 3) return make_error("'" + s + "': too many parts in an address");
    op.text += "]";
    return op;
  }
  for (const auto& [name, code] : {std::pair<const char*, int>{"lsl", 0}, {"lsr", 1}, {"asr", 2}, {"ror", 3}}) {
    const std::string n(name);
    if (s.rfind(n + " ", 0) == 0) {
      int64_t v = 1;
      bool given = false;
      if (!is_imm_text(trim(s.substr(n.size())), v, given)) return make_error("'" + s + "': a shift takes #imm or #n");
      if (given && (v < 0 || v > 63)) return make_error("'" + s + "': a shift amount is 0 to 63");
      op.kind = OpKind::shift;
      op.shift_op = code;
      imm = given ? v : 1;
      op.text = n + (given ? " #" + std::to_string(v) : " #imm");
      return op;
    }
  }
  {
    int64_t v = 1;
    bool given = false;
    if (is_imm_text(s, v, given) && (s[0] == '#' || s.rfind("imm", 0) == 0)) {
      op.kind = OpKind::imm;
      imm = given ? v : 1;
      op.text = given ? "#" + std::to_string(v) : "#imm";
      return op;
    }
  }
  if (auto c = conditions().find(s); c != conditions().end()) {
    op.kind = OpKind::cond;
    op.cond = c->second;
    op.text = s == "hs" ? "cs" : s == "lo" ? "cc" : s;  // one spelling per condition
    return op;
  }
  if (s == "xzr" || s == "wzr") {
    op.kind = OpKind::gp;
    op.bits = s[0] == 'x' ? 64 : 32;
    op.mem_index = true;  // the zero register: never allocated
    op.text = s;
    return op;
  }
  if (reg_name(s, 'x') || reg_name(s, 'w')) {
    op.kind = OpKind::gp;
    op.bits = s[0] == 'x' ? 64 : 32;
    op.text = std::string(1, s[0]);
    return op;
  }
  for (char c : {'b', 'h', 's', 'd', 'q'})
    if (reg_name(s, c)) {
      op.kind = OpKind::fpr;
      op.bits = c == 'b' ? 8 : c == 'h' ? 16 : c == 's' ? 32 : c == 'd' ? 64 : 128;
      op.elem = c;
      op.text = std::string(1, c);
      return op;
    }
  if (s[0] == 'v') return parse_vector(s);
  if (s == "sp" || s == "wsp") return make_error("'" + s + "': the stack pointer is the harness's own");
  return make_error("unknown operand '" + s + "' (kinds: x w, b h s d q, v.4s, v.s[1], {v.16b}, #imm, [x, #imm], lsl #imm, a condition)");
}

arm::Vec vec_with(uint32_t id, const OpSpec& op) {
  const arm::Vec v = aj::v(id);
  switch (op.elem) {
    case 'b': return op.lanes == 8 ? arm::Vec(v.b8()) : arm::Vec(v.b16());
    case 'h': return op.lanes == 4 ? arm::Vec(v.h4()) : arm::Vec(v.h8());
    case 's': return op.lanes == 2 ? arm::Vec(v.s2()) : arm::Vec(v.s4());
    case 'd': return op.lanes == 1 ? arm::Vec(v.d()) : arm::Vec(v.d2());
    default: return arm::Vec(v.q());  // v.1q: asmjit spells it as the q register
  }
}

// Nearest mnemonics by edit distance, for an unknown name.
std::string nearest(const std::string& m) {
  auto dist = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::vector<std::pair<size_t, std::string>> d;
  for (const auto& [name, ids] : mnemonics()) d.push_back({dist(m, name), name});
  std::sort(d.begin(), d.end());
  std::string out;
  for (size_t i = 0; i < d.size() && i < 4; ++i) out += (i ? ", " : "") + d[i].second;
  return out;
}

// Features of a form beyond the base ISA, from its mnemonic (Linux HWCAP names).
std::vector<std::string> features_of(const std::string& m, const std::vector<OpSpec>& ops) {
  static const std::vector<std::pair<const char*, const char*>> kExact = {
      {"sdot", "asimddp"},     {"udot", "asimddp"},    {"usdot", "i8mm"},      {"sudot", "i8mm"},
      {"smmla", "i8mm"},       {"ummla", "i8mm"},      {"usmmla", "i8mm"},     {"bfdot", "bf16"},
      {"bfmmla", "bf16"},      {"bfmlalb", "bf16"},    {"bfmlalt", "bf16"},    {"bfcvt", "bf16"},
      {"bfcvtn", "bf16"},      {"bfcvtn2", "bf16"},    {"sqrdmlah", "asimdrdm"}, {"sqrdmlsh", "asimdrdm"},
      {"fmlal", "asimdfhm"},   {"fmlal2", "asimdfhm"}, {"fmlsl", "asimdfhm"},  {"fmlsl2", "asimdfhm"},
      {"fcmla", "fcma"},       {"fcadd", "fcma"},      {"fjcvtzs", "jscvt"},   {"frint32x", "frint"},
      {"frint32z", "frint"},   {"frint64x", "frint"},  {"frint64z", "frint"},  {"aese", "aes"},
      {"aesd", "aes"},         {"aesmc", "aes"},       {"aesimc", "aes"},      {"eor3", "sha3"},
      {"bcax", "sha3"},        {"rax1", "sha3"},       {"xar", "sha3"},        {"ldapr", "lrcpc"},
      {"ldaprb", "lrcpc"},     {"ldaprh", "lrcpc"}};
  static const std::vector<std::pair<const char*, const char*>> kPrefix = {
      {"crc32", "crc32"}, {"sha1", "sha1"},     {"sha256", "sha2"},  {"sha512", "sha512"}, {"sm3", "sm3"},
      {"sm4", "sm4"},     {"ldadd", "atomics"}, {"ldclr", "atomics"}, {"ldeor", "atomics"}, {"ldset", "atomics"},
      {"ldsmax", "atomics"}, {"ldsmin", "atomics"}, {"ldumax", "atomics"}, {"ldumin", "atomics"},
      {"swp", "atomics"}, {"cas", "atomics"}, {"stadd", "atomics"}, {"stclr", "atomics"}, {"steor", "atomics"},
      {"stset", "atomics"}, {"stsmax", "atomics"}, {"stsmin", "atomics"}, {"stumax", "atomics"},
      {"stumin", "atomics"}, {"pac", "paca"}, {"aut", "paca"}, {"xpac", "paca"}};
  // Memory tagging: its instructions fault without the extension.
  static const std::vector<std::string> kMte = {"addg", "subg", "subp", "subps", "cmpp", "gmi", "irg", "ldg",
                                                "stg", "stzg", "st2g", "stz2g", "stgp"};
  std::vector<std::string> out;
  bool vector = false, scalar_fp = false, half = false;
  for (const auto& op : ops) {
    if (op.kind == OpKind::vec || op.kind == OpKind::elem || op.kind == OpKind::list) vector = true;
    if (op.kind == OpKind::fpr) scalar_fp = true;
    if ((op.kind == OpKind::fpr || op.kind == OpKind::vec || op.kind == OpKind::elem) && op.elem == 'h') half = true;
  }
  if (vector) out.push_back("asimd");
  else if (scalar_fp) out.push_back("fp");
  for (const auto& [name, feat] : kExact)
    if (m == name) out.push_back(feat);
  for (const auto& [prefix, feat] : kPrefix)
    if (m.rfind(prefix, 0) == 0) out.push_back(feat);
  if (std::find(kMte.begin(), kMte.end(), m) != kMte.end()) out.push_back("mte");
  if (m == "cfinv" || m == "setf8" || m == "setf16" || m == "rmif") out.push_back("flagm");
  if (m == "axflag" || m == "xaflag") out.push_back("flagm2");
  if (m == "pacga") out.push_back("pacg");
  if (m == "pmull" || m == "pmull2")
    for (const auto& op : ops)
      if (op.kind == OpKind::vec && op.elem == 'd') out.push_back("pmull");
  // Half-precision arithmetic, conversions to and from integers and moves of h registers are an
  // extension of their own; conversions between h and s or d (fcvt, fcvtl, fcvtn) are base FP.
  const bool fp_op = (m[0] == 'f' || m == "scvtf" || m == "ucvtf") && m != "fcvt" && m != "fcvtl" &&
                     m != "fcvtl2" && m != "fcvtn" && m != "fcvtn2" && m != "fcvtxn";
  if (half && fp_op && out.size() == 1) out.push_back(vector ? "asimdhp" : "fphp");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

const std::vector<std::pair<std::string, std::vector<uint32_t>>>& mnemonics() {
  static const auto all = [] {
    std::map<std::string, std::vector<uint32_t>> m;
    for (uint32_t id = 1; id < aj::Inst::_kIdCount; ++id) {
      String s;
      if (InstAPI::instIdToString(Arch::kAArch64, id, s) == kErrorOk && s.size()) m[s.data()].push_back(id);
    }
    return std::vector<std::pair<std::string, std::vector<uint32_t>>>(m.begin(), m.end());
  }();
  return all;
}

std::vector<Operand> make_operands(const InstForm& f, const std::vector<uint32_t>& ids,
                                   const std::vector<uint32_t>& index_ids, const std::vector<int32_t>& mem_offsets) {
  std::vector<Operand> out;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const OpSpec& op = f.ops[i];
    const uint32_t id = i < ids.size() ? ids[i] : 0;
    switch (op.kind) {
      case OpKind::gp:
        if (op.mem_index) out.push_back(op.bits == 64 ? Operand(aj::xzr) : Operand(aj::wzr));
        else out.push_back(op.bits == 64 ? Operand(aj::x(id)) : Operand(aj::w(id)));
        break;
      case OpKind::fpr: {
        const arm::Vec v = aj::v(id);
        out.push_back(op.elem == 'b' ? Operand(v.b()) : op.elem == 'h' ? Operand(v.h()) : op.elem == 's' ? Operand(v.s())
                      : op.elem == 'd' ? Operand(v.d()) : Operand(v.q()));
        break;
      }
      case OpKind::vec: out.push_back(vec_with(id, op)); break;
      case OpKind::elem: {
        const arm::Vec v = aj::v(id);
        const uint32_t x = uint32_t(op.index);
        if (op.bits == 32 && op.elem == '4') out.push_back(v.b4(x));
        else if (op.bits == 32 && op.elem == '2') out.push_back(v.h2(x));
        else out.push_back(op.elem == 'b' ? v.b(x) : op.elem == 'h' ? v.h(x) : op.elem == 's' ? v.s(x) : v.d(x));
        break;
      }
      case OpKind::list:
        for (int k = 0; k < op.count; ++k) out.push_back(vec_with((id + uint32_t(k)) % 32, op));
        break;
      case OpKind::imm: out.push_back(Imm(f.imms[i])); break;
      case OpKind::shift: out.push_back(Imm(arm::Shift(arm::ShiftOp(op.shift_op), uint32_t(f.imms[i])))); break;
      case OpKind::cond: out.push_back(Imm(op.cond)); break;
      case OpKind::mem: {
        const arm::GpX base = aj::x(id);
        if (op.mem_index) {
          const arm::GpX index = aj::x(i < index_ids.size() ? index_ids[i] : 0);
          if (op.mem_shift >= 0) out.push_back(arm::ptr(base, index, arm::lsl(uint32_t(op.mem_shift))));
          else out.push_back(arm::ptr(base, index));
        } else {
          const int32_t off = op.mem_offset ? (i < mem_offsets.size() ? mem_offsets[i] : int32_t(f.imms[i])) : 0;
          out.push_back(arm::ptr(base, off));
        }
        break;
      }
    }
  }
  return out;
}

bool encodes(uint32_t id, const std::vector<Operand>& ops) {
  if (ops.size() > Globals::kMaxOpCount) return false;
  // One scratch assembler per thread, started afresh now and then: `table` tries many thousand forms.
  struct Scratch {
    CodeHolder code;
    std::unique_ptr<aj::Assembler> a;
    int uses = 0;
  };
  thread_local Scratch s;
  if (!s.a || ++s.uses > 4096) {
    s.a.reset();
    s.code.reset();
    s.code.init(Environment(Arch::kAArch64));
    s.a = std::make_unique<aj::Assembler>(&s.code);
    s.uses = 0;
  }
  return s.a->emitInst(BaseInst(id), ops.data(), ops.size()) == kErrorOk;
}

Expected<InstForm> resolve_inst(const std::string& text_in) {
  // The longest real form is under 60 characters; the cap keeps the nearest-name search from running
  // for minutes on a megabyte of text. Spacing alone is capped at four times as much.
  constexpr size_t kMaxChars = 256;
  const size_t said = size_t(std::count_if(text_in.begin(), text_in.end(), [](unsigned char c) { return !std::isspace(c); }));
  if (said > kMaxChars || text_in.size() > 4 * kMaxChars)
    return make_error(fmt::format("instruction text of {} characters (not counting spaces): at most {}", said, kMaxChars));
  const std::string text = trim(text_in);
  if (text.empty()) return make_error("an empty instruction");
  const auto sp = text.find_first_of(" \t");
  InstForm f;
  f.mnemonic = lower(text.substr(0, sp));
  const std::string rest = sp == std::string::npos ? "" : trim(text.substr(sp));
  if (f.mnemonic.find('.') != std::string::npos)
    return make_error(fmt::format("'{}': conditional branches are not measured on AArch64", text));
  const auto& names = mnemonics();
  auto it = std::lower_bound(names.begin(), names.end(), f.mnemonic,
                             [](const auto& e, const std::string& m) { return e.first < m; });
  if (it == names.end() || it->first != f.mnemonic)
    return make_error(fmt::format("unknown AArch64 mnemonic '{}' (nearest: {})", f.mnemonic, nearest(f.mnemonic)));
  std::vector<size_t> open_imms;  // #imm operands without a value: the first value that encodes is taken
  for (const auto& t : rest.empty() ? std::vector<std::string>{} : split_top(rest)) {
    int64_t imm = 0;
    auto op = parse_operand(t, imm);
    if (!op) return make_error(fmt::format("'{}': {}", text, op.error()));
    if ((op->kind == OpKind::imm || op->kind == OpKind::shift) && op->text.find("#imm") != std::string::npos)
      open_imms.push_back(f.ops.size());
    f.ops.push_back(*op);
    f.imms.push_back(imm);
  }
  // asmjit keeps a general-register and a vector instruction under one mnemonic (add, mul, neg...) and
  // the vector encoder takes general registers without complaint: the operands pick the variant.
  bool simd = false;
  for (const auto& op : f.ops) simd = simd || op.file() == RegFile::simd;
  std::vector<uint32_t> candidates;
  for (uint32_t id : it->second)
    if ((id >= aj::Inst::kIdAbs_v) == simd) candidates.push_back(id);
  if (candidates.empty()) candidates = it->second;
  // Distinct registers for a trial encoding: general x3.., vectors v1.. (lists consecutive).
  std::vector<uint32_t> ids(f.ops.size(), 0), index_ids(f.ops.size(), 0);
  uint32_t next_gp = 3, next_v = 1;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const OpSpec& op = f.ops[i];
    if (op.kind == OpKind::gp) ids[i] = next_gp++;
    else if (op.kind == OpKind::mem) {
      ids[i] = next_gp++;
      if (op.mem_index) index_ids[i] = next_gp++;
    } else if (op.is_reg()) {
      ids[i] = next_v;
      next_v += uint32_t(op.reg_count());
    }
  }
  bool pick_shift = false;
  size_t shift_op = 0;
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].kind == OpKind::mem && f.ops[i].mem_shift == -2) {
      pick_shift = true;
      shift_op = i;
    }
  // Immediates left open take 1 where it encodes, else the first of these that does (a rotation of
  // 90, a multiple of the access size).
  const std::vector<int64_t> imm_tries = open_imms.empty() ? std::vector<int64_t>{0} : std::vector<int64_t>{1, 0, 90, 2, 3, 4, 8, 16};
  for (int64_t imm_value : imm_tries) {
    for (size_t i : open_imms) f.imms[i] = imm_value;
    for (int shift : pick_shift ? std::vector<int>{1, 2, 3, 4} : std::vector<int>{-1}) {
      // A shift amount of 0 is the plain index form: only a shift the access size takes counts.
      if (pick_shift) f.ops[shift_op].mem_shift = shift;
      for (uint32_t id : candidates)
        if (encodes(id, make_operands(f, ids, index_ids, {}))) {
          f.inst_id = id;
          break;
        }
      if (f.inst_id) break;
    }
    if (f.inst_id) break;
  }
  if (!f.inst_id) {
    std::string kinds;
    for (const auto& op : f.ops) kinds += (kinds.empty() ? "" : ", ") + op.text;
    return make_error(fmt::format("'{}': AArch64 has no {} with operands ({}), as far as asmjit encodes it", text,
                                  f.mnemonic, kinds.empty() ? "none" : kinds));
  }
  f.display = f.mnemonic;
  for (size_t i = 0; i < f.ops.size(); ++i) f.display += (i ? ", " : " ") + f.ops[i].text;
  // Which operands are read and written, from asmjit's database (a list spans several asmjit
  // operands: the first one speaks for it).
  const auto ops = make_operands(f, ids, index_ids, {});
  InstRWInfo rw;
  f.reads.assign(f.ops.size(), false);
  f.writes.assign(f.ops.size(), false);
  if (InstAPI::queryRWInfo(Arch::kAArch64, BaseInst(f.inst_id), ops.data(), ops.size(), &rw) == kErrorOk) {
    size_t k = 0;
    for (size_t i = 0; i < f.ops.size(); ++i) {
      if (k < rw.opCount()) {
        f.reads[i] = rw.operand(k).isRead();
        f.writes[i] = rw.operand(k).isWrite();
        // A list's later registers: written or read as the first.
        for (int extra = 1; extra < std::max(1, f.ops[i].reg_count()); ++extra) {
          if (k + size_t(extra) < rw.opCount() && rw.operand(k + size_t(extra)).isWrite()) f.writes[i] = true;
        }
      }
      k += size_t(std::max(1, f.ops[i].kind == OpKind::list ? f.ops[i].count : 1));
    }
  }
  // Plain loads write every register before the address (asmjit's table leaves a pair's second
  // register out); atomics keep the table's answer (ldadd reads its first register).
  static const char* kAtomicLoads[] = {"ldadd", "ldclr", "ldeor", "ldset", "ldsmax", "ldsmin", "ldumax", "ldumin"};
  const bool atomic = std::any_of(std::begin(kAtomicLoads), std::end(kAtomicLoads),
                                  [&](const char* p) { return f.mnemonic.rfind(p, 0) == 0; });
  if (f.mnemonic.rfind("ld", 0) == 0 && !atomic)
    for (size_t i = 0; i < f.ops.size() && f.ops[i].kind != OpKind::mem; ++i)
      if (f.ops[i].is_reg()) {
        f.writes[i] = true;
        f.reads[i] = f.ops[i].kind == OpKind::elem;  // a lane load keeps the other lanes
      }
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].kind == OpKind::mem || !f.ops[i].is_reg()) f.writes[i] = false;
  f.features = features_of(f.mnemonic, f.ops);
  return f;
}

std::string infer_dtype(const InstForm& f) {
  const std::string& m = f.mnemonic;
  if (m.rfind("bf", 0) == 0) return "bf16";
  if (m == "sdot" || m == "udot" || m == "usdot" || m == "sudot" || m == "smmla" || m == "ummla" || m == "usmmla")
    return "i8";
  if ((m.rfind("ld", 0) == 0 || m.rfind("st", 0) == 0) && m != "stnp" && m.find("add") == std::string::npos) return "-";
  const OpSpec* first = nullptr;
  const bool conversion = m.rfind("fcvt", 0) == 0 || m == "scvtf" || m == "ucvtf";
  for (size_t i = conversion && f.ops.size() > 1 ? 1 : 0; i < f.ops.size(); ++i)
    if (f.ops[i].is_reg()) {
      first = &f.ops[i];
      break;
    }
  if (!first) return "-";
  const bool fp = (m[0] == 'f' && !(conversion && first->kind == OpKind::gp)) || (conversion && m != "scvtf" && m != "ucvtf");
  if (first->kind == OpKind::gp) return first->bits == 64 ? "i64" : "i32";
  const char e = first->elem;
  if (fp) return e == 'h' ? "f16" : e == 's' ? "f32" : e == 'd' ? "f64" : "-";
  return e == 'b' ? "i8" : e == 'h' ? "i16" : e == 's' ? "i32" : e == 'd' ? "i64" : "-";
}

std::string refusal_reason(const InstForm& f) {
  static const std::vector<std::string> kBranches = {"b", "bl", "br", "blr", "ret", "cbz", "cbnz", "tbz", "tbnz",
                                                     "braa", "brab", "blraa", "blrab", "retaa", "retab", "eret"};
  static const std::vector<std::string> kSystem = {"svc", "hvc", "smc", "brk", "hlt", "msr", "mrs", "sys", "sysl",
                                                   "dc", "ic", "tlbi", "at", "wfe", "wfi", "udf", "dcps1", "dcps2",
                                                   "dcps3", "drps", "sev", "sevl", "setffr"};
  const std::string& m = f.mnemonic;
  if (std::find(kBranches.begin(), kBranches.end(), m) != kBranches.end())
    return "branches and returns leave the generated loop: not measured on AArch64";
  if (std::find(kSystem.begin(), kSystem.end(), m) != kSystem.end())
    return "a system instruction (exception, system register, cache or TLB maintenance, wait): "
           "it traps or stalls in user space";
  if (m == "ldgm" || m == "stgm" || m == "stzgm") return "a tag instruction undefined at EL0 (user space)";
  if (m.rfind("aut", 0) == 0)
    return "authenticates a value that carries no pointer signature: it faults where FEAT_FPAC is present";
  if (m == "ldraa" || m == "ldrab")
    return "an authenticated load: the probe buffer's address carries no pointer signature, so it always faults";
  for (const auto& op : f.ops)
    if (op.kind == OpKind::mem && op.mem_index && op.mem_shift < 0 && op.mem_offset) return "unsupported address";
  return "";
}

}  // namespace peakprobe::a64
