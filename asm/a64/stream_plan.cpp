#include "asm/a64/stream_plan.hpp"

#include <algorithm>

#include <asmjit/arm.h>
#include <asmjit/arm/a64assembler.h>
#include <fmt/format.h>

namespace peakprobe::a64 {
using namespace asmjit;
namespace aj = asmjit::a64;

namespace {

constexpr uint32_t kBufferReg = 1;

bool is_zero_reg(const OpSpec& op) { return op.kind == OpKind::gp && op.mem_index; }

// The general registers the stream may use, in allocation order, and the vector registers from v0 up
// (sources first: an element operand of 16-bit lanes must sit in v0-v15).
class Regs {
 public:
  Regs() {
    for (uint32_t i = 3; i <= 30; ++i)
      if (i != 18) gp_.push_back(i);
  }
  bool gp(uint32_t& id) {
    if (gp_next_ >= gp_.size()) return false;
    id = gp_[gp_next_++];
    return true;
  }
  bool vec(int n, uint32_t& id) {
    if (v_next_ + uint32_t(n) > uint32_t(kVecFree)) return false;
    id = v_next_;
    v_next_ += uint32_t(n);
    return true;
  }

 private:
  std::vector<uint32_t> gp_;
  size_t gp_next_ = 0;
  uint32_t v_next_ = 0;
};

struct Needs {
  int gp_src = 0, v_src = 0, gp_write = 0, v_write = 0;
};

Needs needs_of(const InstForm& f) {
  Needs n;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const OpSpec& op = f.ops[i];
    if (op.kind == OpKind::mem && op.mem_index) ++n.gp_src;
    if (!op.is_reg() || is_zero_reg(op)) continue;
    int& slot = f.writes[i] ? (op.file() == RegFile::gp ? n.gp_write : n.v_write)
                            : (op.file() == RegFile::gp ? n.gp_src : n.v_src);
    slot += op.reg_count();
  }
  return n;
}

uint32_t vec_bits_mask(uint32_t id, int n) {
  uint32_t m = 0;
  for (int k = 0; k < n; ++k) m |= 1u << ((id + uint32_t(k)) % 32);
  return m;
}

// A register (or list) of `op`'s file for the stream, set up as it starts: general registers hold
// `gp_value`, vector registers the data pattern.
bool allocate(Regs& regs, StreamPlan& plan, const OpSpec& op, uint32_t& id, uint64_t gp_value = 1) {
  if (op.file() == RegFile::gp) {
    if (!regs.gp(id)) return false;
    plan.gp_inits.push_back({id, false, gp_value});
    return true;
  }
  if (!regs.vec(op.reg_count(), id)) return false;
  plan.vec_used |= vec_bits_mask(id, op.reg_count());
  return true;
}

// One instruction: registers from `ids`, memory at the buffer (offset `offset` where the form has
// one and it encodes, else 0).
Expected<PlannedInst> instance(const InstForm& f, const std::vector<uint32_t>& ids, const std::vector<uint32_t>& index_ids,
                               int32_t offset) {
  // Offsets the text left open ("#imm") are the planner's; a number in the text is kept.
  std::vector<int32_t> offsets(f.ops.size(), offset);
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].kind == OpKind::mem && f.ops[i].mem_offset && !f.ops[i].offset_open) offsets[i] = int32_t(f.imms[i]);
  PlannedInst p;
  p.inst_id = f.inst_id;
  p.ops = make_operands(f, ids, index_ids, offsets);
  if (encodes(p.inst_id, p.ops)) return p;
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].kind == OpKind::mem && f.ops[i].offset_open) offsets[i] = 0;
  p.ops = make_operands(f, ids, index_ids, offsets);
  if (encodes(p.inst_id, p.ops)) return p;
  return make_error(fmt::format("'{}': asmjit cannot encode it with the planned registers", f.display));
}

int first_written(const InstForm& f) {
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.writes[i] && f.ops[i].is_reg() && !is_zero_reg(f.ops[i])) return int(i);
  return -1;
}

bool has_load(const InstForm& f) {
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].kind == OpKind::mem) return first_written(f) >= 0;
  return false;
}

int mem_operand(const InstForm& f) {
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].kind == OpKind::mem) return int(i);
  return -1;
}

}  // namespace

int max_chains(const InstForm& form) { return max_rounds({{&form, 1}}); }

bool writes_whole_destination(const InstForm& f) {
  int written = 0;
  for (size_t i = 0; i < f.ops.size(); ++i) written += f.writes[i] ? 1 : 0;
  const int d = first_written(f);
  if (written != 1 || d < 0 || f.reads[size_t(d)]) return false;
  const OpKind kind = f.ops[size_t(d)].kind;
  if (kind != OpKind::gp && kind != OpKind::fpr && kind != OpKind::vec) return false;
  const std::string& m = f.mnemonic;
  const bool narrows_high = m.size() > 2 && m.compare(m.size() - 2, 2, "n2") == 0;
  const bool with_immediate =
      std::any_of(f.ops.begin(), f.ops.end(), [](const OpSpec& op) { return op.kind == OpKind::imm; });
  const bool merges_immediate = (m == "orr" || m == "bic") && kind == OpKind::vec && with_immediate;
  return !narrows_high && !merges_immediate && m != "tbx" && m != "sri" && m != "sli";
}

namespace {

// Chains entry e rotates its instances through at `rounds` rounds, in a mix of `parts` entries.
int chains_at(const MixEntry& e, int rounds, size_t parts) {
  const int instances = e.weight * rounds;
  if (e.chains > 0) return std::min(e.chains, instances);
  if (parts > 1 && writes_whole_destination(*e.form)) return std::min(kWholeWriteChains, instances);
  return instances;
}

}  // namespace

int max_rounds(const std::vector<MixEntry>& entries) {
  // Registers grow with the rounds until every entry with a chain limit has reached it.
  auto fits = [&](int rounds) {
    Needs total;
    for (const auto& e : entries) {
      const Needs n = needs_of(*e.form);
      const int chains = chains_at(e, rounds, entries.size());
      total.gp_src += n.gp_src;
      total.v_src += n.v_src;
      total.gp_write += n.gp_write * chains;
      total.v_write += n.v_write * chains;
    }
    return total.gp_src + total.gp_write <= kGpFree && total.v_src + total.v_write <= kVecFree;
  };
  int rounds = 0;
  while (rounds < kMaxChains && fits(rounds + 1)) ++rounds;
  return rounds;
}

Expected<StreamPlan> plan_mix(const std::vector<MixEntry>& entries, int rounds) {
  if (entries.empty()) return make_error("an empty mix");
  if (rounds < 1) return make_error("a stream needs at least one round");
  if (rounds > max_rounds(entries))
    return make_error(fmt::format("{} rounds of this mix need more registers than AArch64 has (at most {})", rounds,
                                  max_rounds(entries)));
  StreamPlan plan;
  Regs regs;
  // Read-only registers, shared by every instance of a form: never written, so no instance waits.
  std::vector<std::vector<uint32_t>> src(entries.size()), index(entries.size());
  for (size_t e = 0; e < entries.size(); ++e) {
    src[e].assign(entries[e].form->ops.size(), 0);
    index[e].assign(entries[e].form->ops.size(), 0);
  }
  // Elements of 16-bit lanes must sit in v0-v15: those sources first, of every form, then the rest.
  auto low_only = [](const OpSpec& op) { return op.kind == OpKind::elem && op.bits == 16; };
  for (int pass = 0; pass < 2; ++pass)
  for (size_t e = 0; e < entries.size(); ++e) {
    const InstForm& f = *entries[e].form;
    for (size_t i = 0; i < f.ops.size(); ++i) {
      const OpSpec& op = f.ops[i];
      if (low_only(op) != (pass == 0)) continue;
      if (op.kind == OpKind::mem) {
        src[e][i] = kBufferReg;
        if (op.mem_index) {
          if (!regs.gp(index[e][i])) return make_error("out of general registers");
          plan.gp_inits.push_back({index[e][i], false, 0});  // index 0: the buffer's first line
        }
        continue;
      }
      if (!op.is_reg() || is_zero_reg(op) || f.writes[i]) continue;
      // General sources hold 1: a divisor, a shift, a multiplier that keeps values small.
      if (!allocate(regs, plan, op, src[e][i])) return make_error("out of registers");
    }
  }
  // Each entry's chains: the registers its instances write, one set per chain, allocated where the
  // chain first appears (instance j of an entry continues chain j mod chains).
  std::vector<std::vector<std::vector<uint32_t>>> chains(entries.size());
  plan.measured_per_form.assign(entries.size(), 0);
  int n = 0;
  for (int r = 0; r < rounds; ++r)
    for (size_t e = 0; e < entries.size(); ++e) {
      const InstForm& f = *entries[e].form;
      const size_t count = size_t(chains_at(entries[e], rounds, entries.size()));
      for (int w = 0; w < entries[e].weight; ++w) {
        const size_t chain = size_t(r * entries[e].weight + w) % count;
        if (chain == chains[e].size()) {
          std::vector<uint32_t> ids = src[e];
          for (size_t i = 0; i < f.ops.size(); ++i) {
            const OpSpec& op = f.ops[i];
            if (!f.writes[i] || !op.is_reg() || is_zero_reg(op)) continue;
            if (!allocate(regs, plan, op, ids[i])) return make_error("out of registers");
          }
          chains[e].push_back(std::move(ids));
        }
        const std::vector<uint32_t>& ids = chains[e][chain];
        // Each instance its own cache line where the form takes an offset (stores do not queue on one line).
        auto p = instance(f, ids, index[e], int32_t((n % 8) * 64));
        if (!p) return make_error(p.error());
        plan.copy.push_back(std::move(p.value()));
        ++plan.measured_per_form[e];
        ++n;
      }
    }
  plan.chains = rounds;
  plan.measured_per_copy = n;
  plan.method = "independent chains";
  return plan;
}

Expected<StreamPlan> plan_throughput(const InstForm& form, int chains) {
  auto plan = plan_mix({{&form, 1}}, chains);
  if (plan) plan->chains = chains;
  return plan;
}

std::vector<int> latency_operands(const InstForm& f) {
  std::vector<int> out;
  const int d = first_written(f);
  if (d < 0) return out;
  if (f.reads[size_t(d)]) out.push_back(d);
  // Inputs in the result's register file first, then those in the other one (reached through a
  // bridge: the figure is an upper bound).
  for (bool same : {true, false})
    for (size_t i = 0; i < f.ops.size(); ++i) {
      if (int(i) == d || f.writes[i]) continue;
      const OpSpec& op = f.ops[i];
      if (op.is_reg() && !is_zero_reg(op) && (op.file() == f.ops[size_t(d)].file()) == same) out.push_back(int(i));
    }
  // A load of 64 bits into a 64-bit general register: the loaded value is the next address (not a
  // byte, halfword or sign-extended word load: ldrb, ldrsh, ldrsw, ldpsw...).
  const int m = mem_operand(f);
  const std::string& mn = f.mnemonic;
  const bool narrow = mn.back() == 'b' || mn.back() == 'h' || (mn.size() > 2 && mn.compare(mn.size() - 2, 2, "sw") == 0);
  // Atomics (ldadd, ldset...) change the word they load: no chain survives them.
  const bool atomic = std::find(f.features.begin(), f.features.end(), "atomics") != f.features.end();
  if (m >= 0 && f.ops[size_t(d)].kind == OpKind::gp && f.ops[size_t(d)].bits == 64 && mn.rfind("ld", 0) == 0 &&
      !narrow && !atomic)
    out.push_back(m);
  return out;
}

Expected<StreamPlan> plan_latency(const InstForm& form) {
  const auto ops = latency_operands(form);
  if (ops.empty()) {
    if (first_written(form) < 0) return make_error("writes no register (memory or flags only): no latency chain");
    return make_error("no input in the result's register file: a latency chain would need a bridge between register "
                      "files (not built on AArch64)");
  }
  return plan_latency_through(form, ops.front());
}

Expected<StreamPlan> plan_latency_through(const InstForm& f, int operand) {
  const auto allowed = latency_operands(f);
  if (std::find(allowed.begin(), allowed.end(), operand) == allowed.end())
    return make_error(fmt::format("'{}': operand {} cannot carry a latency chain", f.display, operand + 1));
  const int d = first_written(f);
  StreamPlan plan;
  plan.latency = true;
  Regs regs;
  std::vector<uint32_t> ids(f.ops.size(), 0), index_ids(f.ops.size(), 0);
  // Sources first (low vector numbers), then the chain's registers.
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const OpSpec& op = f.ops[i];
    if (op.kind == OpKind::mem) {
      ids[i] = kBufferReg;
      if (op.mem_index) {
        if (!regs.gp(index_ids[i])) return make_error("out of general registers");
        plan.gp_inits.push_back({index_ids[i], false, 0});
      }
      continue;
    }
    if (!op.is_reg() || is_zero_reg(op) || f.writes[i] || int(i) == operand) continue;
    if (!allocate(regs, plan, op, ids[i])) return make_error("out of registers");
  }
  // Registers written besides the chain's (a load pair's second register): their own.
  auto other_writes = [&](std::vector<uint32_t>& v) -> bool {
    for (size_t i = 0; i < f.ops.size(); ++i) {
      if (int(i) == d || !f.writes[i] || !f.ops[i].is_reg() || is_zero_reg(f.ops[i])) continue;
      if (!allocate(regs, plan, f.ops[i], v[i])) return false;
    }
    return true;
  };
  const OpSpec& dest = f.ops[size_t(d)];
  // One measured or helper instruction of the chain, with these registers.
  auto add = [&](const std::vector<uint32_t>& v) -> std::string {
    auto p = instance(f, v, index_ids, 0);
    if (!p) return p.error();
    plan.copy.push_back(std::move(p.value()));
    return "";
  };
  auto take = [&](uint32_t& id) -> bool {
    if (dest.file() == RegFile::gp) {
      if (!regs.gp(id)) return false;
      plan.gp_inits.push_back({id, false, 1});
      return true;
    }
    const int n = std::max(dest.reg_count(), f.ops[size_t(operand)].reg_count());
    if (!regs.vec(n, id)) return false;
    plan.vec_used |= vec_bits_mask(id, n);
    return true;
  };
  if (f.ops[size_t(operand)].kind == OpKind::mem) {
    // Pointer chase: every buffer word holds the buffer's address, so the loaded value is the address again.
    uint32_t r = 0;
    if (!regs.gp(r) || !other_writes(ids)) return make_error("out of general registers");
    plan.gp_inits.push_back({r, true, 0});
    ids[size_t(d)] = r;
    ids[size_t(operand)] = r;
    if (std::string why = add(ids); !why.empty()) return make_error(why);
    plan.chase_bits = 64;
    plan.method = "pointer chase: the loaded value is the next address";
  } else if (f.ops[size_t(operand)].file() != dest.file()) {
    // The result goes back through fmov between the register files, a helper whose latency is not
    // known (2-5 cycles on most cores): the chain's time per link is an upper bound.
    uint32_t r = 0, k = 0;
    if (!take(r)) return make_error("out of registers");
    const OpSpec& in = f.ops[size_t(operand)];
    if (!allocate(regs, plan, in, k) || !other_writes(ids)) return make_error("out of registers");
    ids[size_t(d)] = r;
    ids[size_t(operand)] = k;
    if (std::string why = add(ids); !why.empty()) return make_error(why);
    PlannedInst bridge;
    bridge.measured = false;
    bridge.inst_id = aj::Inst::kIdFmov_v;
    const bool wide = (dest.file() == RegFile::gp ? dest.bits : in.bits) == 64;
    if (dest.file() == RegFile::gp)  // general result -> SIMD&FP input
      bridge.ops = {wide ? Operand(aj::v(k).d()) : Operand(aj::v(k).s()), wide ? Operand(aj::x(r)) : Operand(aj::w(r))};
    else  // SIMD&FP result -> general input
      bridge.ops = {wide ? Operand(aj::x(k)) : Operand(aj::w(k)), wide ? Operand(aj::v(r).d()) : Operand(aj::v(r).s())};
    if (!encodes(bridge.inst_id, bridge.ops)) return make_error("cannot encode the fmov bridge");
    plan.copy.push_back(std::move(bridge));
    plan.upper_bound = true;
    plan.method = fmt::format("result into operand {} through fmov between register files (an upper bound)", operand + 1);
  } else if (operand == d) {
    uint32_t r = 0;
    if (!take(r) || !other_writes(ids)) return make_error("out of registers");
    ids[size_t(d)] = r;
    if (std::string why = add(ids); !why.empty()) return make_error(why);
    plan.method = "chain through the destination (it is also read)";
  } else if (f.reads[size_t(d)]) {
    // The destination is read too: two registers alternate, so the destination's own chain runs
    // beside the measured path (operand -> result), not on it.
    uint32_t a = 0, b = 0;
    if (!take(a) || !take(b) || !other_writes(ids)) return make_error("out of registers");
    for (auto [out, in] : {std::pair{a, b}, std::pair{b, a}}) {
      std::vector<uint32_t> v = ids;
      v[size_t(d)] = out;
      v[size_t(operand)] = in;
      if (std::string why = add(v); !why.empty()) return make_error(why);
    }
    plan.method = fmt::format("result into operand {} (two registers alternate)", operand + 1);
  } else {
    uint32_t r = 0;
    if (!take(r) || !other_writes(ids)) return make_error("out of registers");
    ids[size_t(d)] = r;
    ids[size_t(operand)] = r;
    if (std::string why = add(ids); !why.empty()) return make_error(why);
    plan.method = fmt::format("result into operand {}", operand + 1);
  }
  plan.chains = 1;
  plan.measured_per_copy = int(std::count_if(plan.copy.begin(), plan.copy.end(), [](const PlannedInst& p) { return p.measured; }));
  plan.measured_per_form = {plan.measured_per_copy};
  return plan;
}

}  // namespace peakprobe::a64
