#include "asm/a64/arithmetic.hpp"

#include <algorithm>
#include <set>

namespace peakprobe::a64 {
namespace {

const std::set<std::string>& one_per_lane() {
  static const std::set<std::string> s = {
      "fadd", "fsub", "fmul", "fdiv", "fsqrt", "fmax", "fmin", "fmaxnm", "fminnm", "fabd", "fmulx", "frecpe",
      "frsqrte", "frecps", "frsqrts", "fcmeq", "fcmge", "fcmgt", "faddp", "fmaxp", "fminp", "add", "sub", "mul",
      "sqadd", "uqadd", "sqsub", "uqsub", "abs", "neg", "smax", "smin", "umax", "umin", "cmeq", "cmgt", "cmge",
      "cmhi", "cmhs", "cmtst", "shl", "sshr", "ushr", "sshl", "ushl", "sabd", "uabd", "addp", "smaxp", "sminp",
      "umaxp", "uminp", "sqdmulh", "sqrdmulh", "smull", "umull", "smull2", "umull2", "saddl", "uaddl", "saddw",
      "uaddw", "ssubl", "usubl", "adds", "subs", "adc", "sbc", "cmp", "cmn", "udiv", "sdiv", "smulh", "umulh",
      "lsl", "lsr", "asr", "ror", "lslv", "lsrv", "asrv", "rorv", "negs", "fnmul", "fabs", "fneg", "cnt", "clz",
      "cls", "srshr", "urshr", "srhadd", "urhadd", "shadd", "uhadd"};
  return s;
}

const std::set<std::string>& two_per_lane() {
  static const std::set<std::string> s = {"fmla", "fmls", "mla", "mls", "fmadd", "fmsub", "fnmadd", "fnmsub", "madd",
                                          "msub", "smaddl", "umaddl", "smsubl", "umsubl", "smlal", "umlal", "smlal2",
                                          "umlal2", "smlsl", "umlsl", "sqrdmlah", "sqrdmlsh", "saba", "uaba", "fmlal",
                                          "fmlsl", "fmlal2", "fmlsl2", "sadalp", "uadalp"};
  return s;
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
  const std::string dtype = infer_dtype(f);
  const int lanes = result_lanes(f);
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
      if (op.kind == OpKind::vec) return Arithmetic{double(std::max(1, op.lanes - 1)), infer_dtype(f)};
  }
  return std::nullopt;
}

}  // namespace peakprobe::a64
