#!/usr/bin/env python3
"""Check the pipe verdicts of a `peakprobe table --pipes` document against a published pipe map.

    python3 benchmarks/pipe-maps/check.py amd-zen4.map table.json [--all]

For every form of the map's [held-out] section that is not a seed of the document (the held-out set) and has
verdicts, each pair (form, basis member) is predicted from the map alone: the pair's time under the
best assignment of its instructions to the units the map allows (a lower bound that is exact for
two instruction classes: the most loaded union of unit sets decides), with the same weights, the
same issue width and the same thresholds peakprobe uses (docs/table.md, "How one pair is judged").
The prediction is compared with the measured verdict:

- strict: the same class (none / partial / shared);
- contends: both say the two compete (partial or shared) or both say they do not (none).

A prediction within 0.05 of a threshold (where `none` ends, 0.1-0.25 as peakprobe sets it; 0.75) accepts the classes on both sides.

A form agrees when all its judged pairs agree. A map entry whose own throughput (one instruction per
cycle on each of its units, at its occupancy) is more than 15% off the throughput peakprobe measured
for the form alone cannot describe that form's pipes; pairs with such an entry (the form's or the
basis member's) are counted apart as "map contradicted", and the figures are given with and without them. Verdicts peakprobe gave as `issue-width` or
`unmeasured` are counted and left out; `penalty` verdicts (the pair ran far slower than its parts in
sequence: a cost at every switch, which no pipe map describes) are listed and left out, as are pairs the map predicts at the issue width.
This is a benchmark aid, not part of peakprobe or its tests.

Map resources: a resource is a unit prefix (capital letters) and the unit numbers it may use, each a
single digit or a bracketed number for a unit numbered 10 or more, optionally followed by *N, the
cycles it holds that unit: A0123 = any of A0..A3, P0156[10] = any of P0, P1, P5, P6, P10, FD*5 = the
unit FD held 5 cycles. `+` joins the resources one instruction needs all of (one per uop).
"""
import argparse
import itertools
import json
import re
import sys

NONE_BELOW, SHARED_ABOVE, WIDTH_GAP = 0.25, 0.75, 0.25  # pairs/classify.hpp, pairs/pipe_groups.cpp
# `none` ends at CONTAINED_SHARE of what a containment would show (the narrow part's pipes all among
# the wide part's), between PARTIAL_FLOOR and NONE_BELOW (judge_contention in pairs/pipe_groups.cpp).
# and where the pair is at least NOISE_SHARE of the co-issue time slower than co-issue.
CONTAINED_SHARE, PARTIAL_FLOOR, NOISE_SHARE = 0.5, 0.1, 0.03
# A prediction this close to a threshold accepts the class on either side of it: the map's own
# bound is an idealised schedule, and one pair's measurement moves by about this much between runs.
# (EPS: 0.2 is within 0.05 of 0.25, whatever the floating-point rounding of either.)
BORDER, EPS = 0.05, 1e-9


def classes_near(c, none_below=NONE_BELOW):
    """The classes a predicted same-port value c accepts."""
    out = set()
    for lo, hi, name in ((-1, none_below, "none"), (none_below, SHARED_ABOVE, "partial"), (SHARED_ABOVE, 2, "shared")):
        if lo - BORDER - EPS <= c < hi + BORDER + EPS:
            out.add(name)
    return out


def none_below_for(floor, ceiling, a, b, ta, tb):
    """Where `none` ends for a pair: CONTAINED_SHARE of the same-port value the narrow part (more
    cycles per instruction alone) would show with all its instructions on the wide part's pipes,
    each holding one for the wide part's cycles per instruction; as peakprobe computes it."""
    if ceiling <= floor:
        return NONE_BELOW
    if ta >= tb:
        contained = max(floor, b * tb + a * tb)
    else:
        contained = max(floor, a * ta + b * ta)
    share = min(1.0, max(0.0, (contained - floor) / (ceiling - floor)))
    noise = NOISE_SHARE * floor / (ceiling - floor)
    return min(NONE_BELOW, max(PARTIAL_FLOOR, CONTAINED_SHARE * share, noise))


def parse_map(path):
    width, forms, held_out, section = None, {}, set(), None
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line in ("[seeds]", "[held-out]"):
            section = line
            continue
        if line.startswith("issue_width"):
            width = float(line.split()[1])
            continue
        if "|" not in line:
            sys.exit(f"{path}:{n}: expected 'form | resources'")
        form, res = (s.strip() for s in line.split("|", 1))
        classes = []
        for r in res.split("+"):
            m = re.fullmatch(r"\s*([A-Z]+)((?:\d|\[\d+\])*)(?:\*(\d+(?:\.\d+)?))?\s*", r)
            if not m:
                sys.exit(f"{path}:{n}: resource '{r.strip()}' is not like A0123, F1*3, FD*5 or P0156[10]")
            units = (frozenset(m.group(1) + d.strip("[]") for d in re.findall(r"\d|\[\d+\]", m.group(2)))
                     or frozenset([m.group(1)]))
            classes.append((units, float(m.group(3) or 1)))
        forms[form] = classes
        if section == "[held-out]":
            held_out.add(form)
    if width is None:
        sys.exit(f"{path}: no issue_width line")
    return width, forms, held_out


def bound(load):
    """Cycles for `load` (list of (units, work)) on the best assignment: the most loaded union."""
    sets = list({u for u, _ in load})
    best = 0.0
    for k in range(1, len(sets) + 1):
        for combo in itertools.combinations(sets, k):
            union = frozenset().union(*combo)
            work = sum(w for u, w in load if u <= union)
            best = max(best, work / len(union))
    return best


THROUGHPUT_TOLERANCE = 0.15


def map_throughput(cls):
    return bound([(u, w) for u, w in cls])


def contradicted(cls, measured_recip):
    """True when the map's own throughput for the entry is far from the measured one."""
    if not measured_recip or measured_recip <= 0:
        return False
    return abs(map_throughput(cls) / measured_recip - 1) > THROUGHPUT_TOLERANCE


def predict(fa, fb, a, b, width):
    load = lambda cls, n: [(u, w * n) for u, w in cls]
    ta, tb = bound(load(fa, 1)), bound(load(fb, 1))
    part_a, part_b = a * ta, b * tb
    floor = max(part_a, part_b, (a + b) / width)
    ceiling = part_a + part_b
    if ceiling - floor < WIDTH_GAP * min(part_a, part_b):
        return "issue-width", None, NONE_BELOW
    mix = max(bound(load(fa, a) + load(fb, b)), (a + b) / width)
    c = min(1.0, max(0.0, (mix - floor) / (ceiling - floor)))
    none_below = none_below_for(floor, ceiling, a, b, ta, tb)
    return ("none" if c < none_below else "shared" if c > SHARED_ABOVE else "partial"), c, none_below


def units_of(cls):
    """Every unit an entry may use, on any of its uops."""
    return frozenset().union(*(u for u, _ in cls))


def set_class(fa, fb):
    """The class the map's unit sets imply alone: none when the two entries share no unit, shared when
    they use the same units, partial otherwise. No schedule, no weights: what a reader of the map
    would say of the pair."""
    ua, ub = units_of(fa), units_of(fb)
    return "none" if not ua & ub else "shared" if ua == ub else "partial"


def tally(counts, judged, strict, contends):
    """Adds one form's judged pairs, and whether all of them agree, to `counts`."""
    counts["forms"] += 1
    counts["pairs"] += judged
    counts["pair_strict"] += strict
    counts["pair_contends"] += contends
    counts["strict"] += strict == judged
    counts["contends"] += contends == judged


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("map")
    ap.add_argument("table")
    ap.add_argument("--all", action="store_true", help="print every pair, not only disagreements")
    args = ap.parse_args()
    width, pipe_map, held_out = parse_map(args.map)
    doc = json.load(open(args.table, encoding="utf-8"))
    groups = doc.get("pipe_groups")
    if not groups or not groups.get("basis"):
        sys.exit(f"{args.table}: no pipe basis (run `peakprobe table --pipes`)")
    seeds = set(groups.get("seeds", []))
    basis = [m["instruction"] for m in groups["basis"]]
    missing = [b for b in basis if b not in pipe_map]
    print(f"basis ({len(basis)}): " + "; ".join(basis))
    if missing:
        print("basis members the map does not list (their pairs are left out): " + "; ".join(missing))
    rows = {r["instruction"]: r for r in doc.get("results", [])}
    member_recip = {m["instruction"]: m.get("recip_throughput_cycles") for m in groups["basis"]}
    bad_members = {b for b in basis if b in pipe_map and contradicted(pipe_map[b], member_recip.get(b))}
    for b in sorted(bad_members):
        print(f"map contradicted: basis member {b}: map {map_throughput(pipe_map[b]):.3f} cycles alone, "
              f"measured {member_recip[b]:.3f}")
    bad_forms = []
    counts = dict(forms=0, strict=0, contends=0, pairs=0, pair_strict=0, pair_contends=0, left_out=0)
    clean = dict(forms=0, strict=0, contends=0, pairs=0, pair_strict=0, pair_contends=0)
    by_sets = dict(forms=0, strict=0, contends=0, pairs=0, pair_strict=0, pair_contends=0)
    absent, disagreements, penalties = [], [], []
    for form, cls in pipe_map.items():
        if form in seeds or form not in held_out:
            continue
        row = rows.get(form)
        if row is None or row.get("status") != "ok" or not row.get("pipes"):
            absent.append(f"{form} ({'no row' if row is None else row.get('status')})")
            continue
        form_bad = contradicted(cls, row.get("recip_throughput_cycles"))
        if form_bad:
            bad_forms.append(f"{form} (map {map_throughput(cls):.3f}, measured {row['recip_throughput_cycles']:.3f})")
        judged = ok_strict = ok_contends = 0
        c_judged = c_strict = c_contends = 0
        s_judged = s_strict = s_contends = 0
        for v in row["pipes"]:
            if v["basis"] not in pipe_map:
                continue
            measured = v["contention"]
            a, b = v.get("weights", [1, 1])
            expected, c, none_below = predict(cls, pipe_map[v["basis"]], a, b, width)
            if measured == "penalty":
                # Far slower than the two in sequence: a cost at every switch, which no pipe map
                # describes and which hides the pipes the two share (docs/pairs.md).
                penalties.append(f"{form} x {v['basis']}")
                continue
            if measured in ("issue-width", "unmeasured") or expected == "issue-width":
                counts["left_out"] += 1
                continue
            judged += 1
            accepted = classes_near(c, none_below)
            strict = measured in accepted
            contends = (measured != "none") in {e != "none" for e in accepted}
            ok_strict += strict
            ok_contends += contends
            if not form_bad and v["basis"] not in bad_members:
                c_judged += 1
                c_strict += strict
                c_contends += contends
                by_set = set_class(cls, pipe_map[v["basis"]])
                s_judged += 1
                s_strict += measured == by_set
                s_contends += (measured != "none") == (by_set != "none")
            line = (f"  {form:30} x {v['basis']:28} measured {measured:8} ({v.get('same_port') or 0:.2f}) "
                    f"map {expected:8} ({c:.2f})  weights {a}:{b}")
            if args.all or not strict:
                disagreements.append(line + ("" if strict else "   <- differs" if contends else "   <- DIFFERS"))
        if judged == 0:
            absent.append(f"{form} (no judged pair)")
            continue
        tally(counts, judged, ok_strict, ok_contends)
        if c_judged:
            tally(clean, c_judged, c_strict, c_contends)
        if s_judged:
            tally(by_sets, s_judged, s_strict, s_contends)
    print("\n".join(disagreements))
    if penalties:
        print(f"left out, a penalty at every switch, not a pipe ({len(penalties)} pairs): " + "; ".join(penalties))
    if bad_forms:
        print(f"map contradicted by the measured throughput alone ({len(bad_forms)} held-out forms): " + "; ".join(bad_forms))
    f, p = max(counts["forms"], 1), max(counts["pairs"], 1)
    print(f"held-out forms judged: {counts['forms']}; not judged: {len(absent)}"
          + (f" ({'; '.join(absent[:12])}{'; ...' if len(absent) > 12 else ''})" if absent else ""))
    print(f"forms agreeing on every pair: strict {counts['strict']}/{counts['forms']} "
          f"({100 * counts['strict'] / f:.1f}%), contends {counts['contends']}/{counts['forms']} "
          f"({100 * counts['contends'] / f:.1f}%)")
    print(f"pairs agreeing: strict {counts['pair_strict']}/{counts['pairs']} ({100 * counts['pair_strict'] / p:.1f}%), "
          f"contends {counts['pair_contends']}/{counts['pairs']} ({100 * counts['pair_contends'] / p:.1f}%); "
          f"{counts['left_out']} pairs left out (issue width or unmeasured)")
    f, p = max(clean["forms"], 1), max(clean["pairs"], 1)
    print(f"without pairs whose map entry is contradicted: forms strict {clean['strict']}/{clean['forms']} "
          f"({100 * clean['strict'] / f:.1f}%), contends {clean['contends']}/{clean['forms']} "
          f"({100 * clean['contends'] / f:.1f}%); pairs strict {clean['pair_strict']}/{clean['pairs']} "
          f"({100 * clean['pair_strict'] / p:.1f}%), contends {clean['pair_contends']}/{clean['pairs']} "
          f"({100 * clean['pair_contends'] / p:.1f}%)")
    f, p = max(by_sets["forms"], 1), max(by_sets["pairs"], 1)
    print(f"the same pairs against the map's unit sets alone (none: no unit in common, shared: the same units, "
          f"partial: some): forms strict {by_sets['strict']}/{by_sets['forms']} ({100 * by_sets['strict'] / f:.1f}%), "
          f"contends {by_sets['contends']}/{by_sets['forms']} ({100 * by_sets['contends'] / f:.1f}%); pairs strict "
          f"{by_sets['pair_strict']}/{by_sets['pairs']} ({100 * by_sets['pair_strict'] / p:.1f}%), contends "
          f"{by_sets['pair_contends']}/{by_sets['pairs']} ({100 * by_sets['pair_contends'] / p:.1f}%)")


if __name__ == "__main__":
    main()
