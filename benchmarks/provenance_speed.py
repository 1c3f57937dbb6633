"""Provenance on long tokens: per-match line rescans (the old ``field_at``) vs ``FieldIndex``.

Rows whose tool section holds one very long token (a 20,000-character run of
``nce_21`` fragments, as a runaway serializer would write) make every match of a
character n-gram sit on the same line. The baseline names each match's field the old
way, scanning the whole line again per match (quadratic in the line length); toolaudit's
``locate`` indexes the line once per text (linear). Both must name the same fields.

    python benchmarks/provenance_speed.py                  # 20 rows, 20k-char token
    python benchmarks/provenance_speed.py --rows 50 --token-chars 5000
    python benchmarks/provenance_speed.py --smoke        # 5 rows, 2k-char token: seconds

The last line is ``ratio=<baseline/toolaudit wall time> same_fields=<True|False>``.
``--smoke`` checks that the script runs (its ratio means little at that size).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from toolaudit.leakage._provenance import _KEY_LINE, _PAIR, json_field, locate, term_regex


def old_field_at(text: str, pos: int) -> str:
    """The pre-fix implementation: rescans the line of ``pos`` on every call."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : end if end >= 0 else len(text)]
    off = pos - start
    last = None
    for m in _PAIR.finditer(line):
        if m.start(1) <= off < m.end():
            return f"{m.group(1)} (key)"
        if m.end() > off:
            break
        last = m.group(1)
    if last:
        return last
    if start > 0:
        prev_start = text.rfind("\n", 0, start - 1) + 1
        pm = _KEY_LINE.match(text[prev_start : start - 1])
        if pm and not pm.group(2):
            return pm.group(1).strip()
    return "(line)"


def old_locate(term: str, texts: list[str]) -> Counter[str]:
    """The pre-fix ``locate`` loop: a JSON check and a line rescan per match."""
    rx = term_regex(term, "char_wb")
    core = term.strip(" ")
    fields: Counter[str] = Counter()
    for original in texts:
        lower = original.lower()
        for m in rx.finditer(lower):
            fields[json_field(lower, core) or old_field_at(original, m.start())] += 1
    return fields


def make_rows(n_rows: int, token_chars: int) -> list[str]:
    """Sections with ``key: value`` lines, a pair-dense line, and one long token."""
    unit = "nce_21x"
    token = (unit * (token_chars // len(unit) + 1))[:token_chars]
    pairs = " ".join(f"k{i}=nce_21" for i in range(token_chars // 40))
    return [
        f"model: m{i}\npath: /d/ThermoMPNN_inference_{token}.csv\nflags: {pairs}\nend: ok"
        for i in range(n_rows)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20, help="rows (locate reads <= 400)")
    parser.add_argument("--token-chars", type=int, default=20_000)
    parser.add_argument("--term", default="nce_2")
    parser.add_argument("--smoke", action="store_true", help="--rows 5 --token-chars 2000")
    args = parser.parse_args()
    if args.smoke:
        args.rows, args.token_chars = 5, 2000
    texts = make_rows(args.rows, args.token_chars)
    t0 = time.perf_counter()
    src = locate(args.term, "char_wb", {"t": texts}, ["t"], range(len(texts)))
    new_s = time.perf_counter() - t0
    print(f"toolaudit locate: {new_s:.2f}s, {sum(src.fields.values())} matches")
    t0 = time.perf_counter()
    old = old_locate(args.term, texts[: min(len(texts), 400)])
    old_s = time.perf_counter() - t0
    print(f"baseline (rescan per match): {old_s:.2f}s, {sum(old.values())} matches")
    same = Counter({f: n for (_, f), n in src.fields.items()}) == old
    print(f"ratio={old_s / max(new_s, 1e-9):.1f} same_fields={same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
