#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

const char* to_string(MatmulDtype d) {
  switch (d) {
    case MatmulDtype::f32: return "f32";
    case MatmulDtype::bf16: return "bf16";
    case MatmulDtype::i8: return "int8";
  }
  return "?";
}

}  // namespace peakprobe
