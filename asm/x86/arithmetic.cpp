#include "asm/x86/arithmetic.hpp"

#include <algorithm>
#include <regex>

namespace peakprobe::x86 {
namespace {

int widest_vector_bits(const InstForm& f) {
  int bits = 0;
  for (const auto& k : f.text.operands)
    if (k.cls == OpClass::vec) bits = std::max(bits, k.bits);
  return bits;
}

int element_bits(char c) { return c == 'b' ? 8 : c == 'w' ? 16 : c == 'd' ? 32 : 64; }

// Packed integer arithmetic (m without its VEX/EVEX 'v'), by the catalog's convention: one op per
// lane for add, subtract (saturating too), absolute value, min/max, compare, shift, rotate and
// multiply; 2 per lane for the 52-bit multiply-adds; 2 per element product for pmaddwd/pmaddubsw
// (products of 16-bit and 8-bit elements); a population or leading-zero count one a lane. Logic,
// moves and shuffles are not arithmetic.
std::optional<Arithmetic> packed_integer(const std::string& m, int width) {
  static const std::regex kPerLane(
      "p(?:(?:add|sub)(?:us|s)?|abs|(?:min|max)[su]|cmp(?:eq|gt)|cmpu?|s(?:ll|rl|ra)v?|ro[lr]v?|mull|opcnt|lzcnt)"
      "([bwdq])");
  static const std::regex kMulHigh("pmulh(?:uw|w|rsw)");
  std::smatch match;
  auto lanes = [&](int bits, double per_lane, int elem_bits) {
    return Arithmetic{per_lane * (width / bits), "i" + std::to_string(elem_bits)};
  };
  if (std::regex_match(m, match, kPerLane)) {
    const int bits = element_bits(match[1].str()[0]);
    return lanes(bits, 1, bits);
  }
  if (std::regex_match(m, kMulHigh)) return lanes(16, 1, 16);
  if (m == "pmuludq" || m == "pmuldq") return lanes(64, 1, 32);  // 32 x 32 -> 64-bit products
  if (m == "pmadd52luq" || m == "pmadd52huq") return lanes(64, 2, 64);
  if (m == "pmaddwd") return lanes(16, 2, 16);
  if (m == "pmaddubsw") return lanes(8, 2, 8);
  return std::nullopt;
}

}  // namespace

std::optional<Arithmetic> arithmetic_of(const InstForm& f) {
  // AMX tile products: 16 x 16 sums of 32 bf16 pairs' or 64 byte quads' products, two ops each.
  const std::string& tm = f.text.mnemonic;
  if (tm == "tdpbf16ps" || tm == "tdpfp16ps") return Arithmetic{2.0 * 16 * 16 * 32, tm == "tdpbf16ps" ? "bf16" : "f16"};
  if (tm == "tdpbssd" || tm == "tdpbsud" || tm == "tdpbusd" || tm == "tdpbuud") return Arithmetic{2.0 * 16 * 16 * 64, "i8"};
  const int width = widest_vector_bits(f);
  if (width == 0) return std::nullopt;
  std::string m = f.text.mnemonic;
  const bool vex = m.size() > 1 && m[0] == 'v';
  if (vex) m = m.substr(1);
  // Dot products accumulate into 32-bit lanes.
  const int lanes32 = width / 32;
  if (vex && m == "dpbf16ps") return Arithmetic{4.0 * lanes32, "bf16"};
  if (vex && (m == "pdpbusd" || m == "pdpbusds")) return Arithmetic{8.0 * lanes32, "i8"};
  if (vex && (m == "pdpwssd" || m == "pdpwssds")) return Arithmetic{4.0 * lanes32, "i16"};
  if (m.size() > 1 && m[0] == 'p')
    if (auto a = packed_integer(m, width)) return a;
  // An element add, multiply, divide, square root, min/max, compare, reciprocal (estimate), rounding,
  // horizontal add (one per result lane) or alternating add/subtract: one op a lane.
  static const std::regex kBasic(
      "(add|sub|mul|div|sqrt|min|max|cmp|rcp(?:14|28)?|rsqrt(?:14|28)?|round|rndscale|hadd|hsub|addsub)(p|s)(s|d|h)");
  static const std::regex kFma("fn?m(add|sub)(132|213|231)(p|s)(s|d|h)|fm(addsub|subadd)(132|213|231)(p)(s|d|h)");
  std::smatch match;
  int per_lane = 0;
  char shape = 0, elem = 0;
  if (std::regex_match(m, match, kBasic)) {
    per_lane = 1;
    shape = match[2].str()[0];
    elem = match[3].str()[0];
  } else if (vex && std::regex_match(m, match, kFma)) {
    per_lane = 2;
    const bool plain = match[1].matched;
    shape = (plain ? match[3] : match[7]).str()[0];
    elem = (plain ? match[4] : match[8]).str()[0];
  } else {
    return std::nullopt;
  }
  const int elem_bits = elem == 's' ? 32 : elem == 'd' ? 64 : 16;
  const std::string dtype = elem == 's' ? "f32" : elem == 'd' ? "f64" : "f16";
  const int lanes = shape == 'p' ? width / elem_bits : 1;
  return Arithmetic{double(per_lane * lanes), dtype};
}

}  // namespace peakprobe::x86
