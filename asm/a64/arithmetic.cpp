#include "asm/a64/arithmetic.hpp"

#include <algorithm>
#include <set>

namespace peakprobe::a64 {
namespace {

const std::set<std::string>& one_per_lane() {
  static const std::set<std::string> s = {
      "fadd", "fsub", "fmul", "fdiv", "fsqrt", "fmax", "fmin", "fmaxnm", "fminnm", "fabd", "fmulx", "frecpe",
      "frsqrte", "fcmeq", "fcmge", "fcmgt", "faddp", "fmaxp", "fminp", "add", "sub", "mul",
      "sqadd", "uqadd", "sqsub", "uqsub", "abs", "neg", "smax", "smin", "umax", "umin", "cmeq", "cmgt", "cmge",
      "cmhi", "cmhs", "cmtst", "shl", "sshr", "ushr", "sshl", "ushl", "sabd", "uabd", "addp", "smaxp", "sminp",
      "umaxp", "uminp", "sqdmulh", "sqrdmulh", "smull", "umull", "smull2", "umull2", "saddl", "uaddl", "saddw",
      "uaddw", "ssubl", "usubl", "adds", "subs", "adc", "sbc", "cmp", "cmn", "udiv", "sdiv", "smulh", "umulh",
      "lsl", "lsr", "asr", "ror", "lslv", "lsrv", "asrv", "rorv", "negs", "fnmul", "fabs", "fneg", "cnt", "clz",
      "cls", "srshr", "urshr", "srhadd", "urhadd", "shadd", "uhadd", "saddl2", "uaddl2", "ssubl2", "usubl2",
      "sqdmull", "sqdmull2", "fcmp", "fcmpe", "fcadd", "sli", "sri", "shrn",
      "rshrn", "uaddlp", "saddlp", "csinc", "extr", "frintn", "frinta", "frintm", "frintp", "frintz", "frintx",
      "frinti"};
  return s;
}

const std::set<std::string>& two_per_lane() {
  static const std::set<std::string> s = {"fmla", "fmls", "mla", "mls", "fmadd", "fmsub", "fnmadd", "fnmsub", "madd",
                                          "msub", "smaddl", "umaddl", "smsubl", "umsubl", "smlal", "umlal", "smlal2",
                                          "umlal2", "smlsl", "umlsl", "sqrdmlah", "sqrdmlsh", "saba", "uaba", "fmlal",
                                          "fmlsl", "fmlal2", "fmlsl2", "sadalp", "uadalp", "frecps", "frsqrts",
                                          "usra", "ssra", "ursra", "srsra", "fcmla", "smlsl2", "umlsl2"};
  return s;
}

// Forms whose result is wider (or narrower) than their sources: the catalog counts them in the
// source's element type (smull v.8h, v.8b, v.8b is i8, fmlal f16, shrn v.8b, v.8h i16).
const std::set<std::string>& source_typed() {
  static const std::set<std::string> s = {
      "smull", "umull", "smull2", "umull2", "saddl", "uaddl", "saddl2", "uaddl2", "ssubl", "usubl", "ssubl2",
      "usubl2", "smlal", "umlal", "smlal2", "umlal2", "smlsl", "umlsl", "smlsl2", "umlsl2", "fmlal", "fmlsl",
      "fmlal2", "fmlsl2", "sadalp", "uadalp", "saddlv", "uaddlv", "smaddl", "umaddl", "smsubl", "umsubl",
      "uaddlp", "saddlp", "shrn", "rshrn", "sqdmull", "sqdmull2"};
  return s;
}

// LSE atomics that add or compare in memory: one op each.
bool atomic_arithmetic(const std::string& m) {
  return m.rfind("ldadd", 0) == 0 || m.rfind("stadd", 0) == 0 || (m.rfind("cas", 0) == 0 && m.rfind("casp", 0) != 0);
}

// An atomic's element is its memory access: a b or h suffix (ldaddb, casalh) narrows the register's.
std::string atomic_dtype(const std::string& m, const std::string& register_dtype) {
  if (m.back() == 'b') return "i8";
  if (m.back() == 'h') return "i16";
  return register_dtype;
}

// Adds and subtracts that take a shifted general register (cmp, cmn, neg and negs are aliases of
// subs, adds, sub and subs): the shift and the add. An immediate shifted by 12 is one add.
bool adds_shifted_register(const InstForm& f) {
  static const std::set<std::string> adds = {"add", "sub", "adds", "subs", "cmp", "cmn", "neg", "negs"};
  if (!adds.count(f.mnemonic)) return false;
  for (size_t i = 1; i < f.ops.size(); ++i)
    if (f.ops[i].kind == OpKind::shift && f.ops[i - 1].kind == OpKind::gp) return true;
  return false;
}

// The element type of the first source operand (the operand after the destination).
std::string source_dtype(const InstForm& f) {
  InstForm sources = f;
  if (!sources.ops.empty()) sources.ops.erase(sources.ops.begin());
  return infer_dtype(sources);
}

// Lanes of the result: the first register operand's element count (1 for scalars).
int result_lanes(const InstForm& f) {
  for (const auto& op : f.ops) {
    if (op.kind == OpKind::vec || op.kind == OpKind::list) return op.lanes;
    if (op.is_reg()) return 1;
  }
  return 1;
}

}  // namespace

std::optional<Arithmetic> arithmetic_of(const InstForm& f) {
  const std::string& m = f.mnemonic;
  const std::string dtype = source_typed().count(m) ? source_dtype(f) : infer_dtype(f);
  const int lanes = result_lanes(f);
  if (adds_shifted_register(f)) return Arithmetic{2.0, dtype};
  if (atomic_arithmetic(m)) return Arithmetic{1.0, atomic_dtype(m, dtype)};
  if (m == "sdot" || m == "udot" || m == "usdot" || m == "sudot") return Arithmetic{2.0 * 4 * lanes, "i8"};
  if (m == "bfdot") return Arithmetic{2.0 * 2 * lanes, "bf16"};
  if (m == "smmla" || m == "ummla" || m == "usmmla") return Arithmetic{2.0 * 2 * 2 * 8, "i8"};
  if (m == "bfmmla") return Arithmetic{2.0 * 2 * 2 * 4, "bf16"};
  if (m == "bfmlalb" || m == "bfmlalt") return Arithmetic{2.0 * 4, "bf16"};
  if (two_per_lane().count(m)) return Arithmetic{2.0 * lanes, dtype};
  if (one_per_lane().count(m)) return Arithmetic{1.0 * lanes, dtype};
  // Across-vector reductions: one op per source element but the last.
  if (m == "addv" || m == "saddlv" || m == "uaddlv" || m == "smaxv" || m == "umaxv" || m == "sminv" || m == "uminv" ||
      m == "fmaxv" || m == "fminv" || m == "fmaxnmv" || m == "fminnmv") {
    for (const auto& op : f.ops)
      if (op.kind == OpKind::vec) return Arithmetic{double(std::max(1, op.lanes - 1)), dtype};
  }
  return std::nullopt;
}

}  // namespace peakprobe::a64
