#!/usr/bin/env python3
"""How close `boris-spec adapt` comes to a hand-written adapter (issue 29 §2).

    adapt_measure.py DRAFTED.yaml HAND.yaml [LABEL]

Prints one Markdown row: out of the capabilities the hand-written adapter maps (what
the server really has), how many the draft mapped the same way (tool, every argument
and its transforms, edit template, captures), how many it mapped otherwise (each shows
as failures of the cases using it), how many it left as TODO (reported unsupported);
then what the draft mapped that the hand adapter says the server lacks. A mapping that
differs only in how it spells a path (`{path}`, `{path_abs}`, `{path_rel}`, `{dir_abs}`)
is counted apart: whether the server takes that form is for a run with the draft to say.
So is a narrower one, which leaves out only arguments that carry optional step values
(`{context}`, `{type}`): the cases that give such a value are then not supported, not
failed.
"""
import json
import re
import sys

import yaml


def shape(mapping):
    """What a mapping decides: its tool, arguments, edit template and captures."""
    return {k: mapping.get(k) for k in ("tool", "args", "edit", "capture")}


PATH_FORMS = re.compile(r"\{(path|path_abs|path_rel|dir_abs)\}")


def path_blind(value):
    """The mapping with every spelling of a path made one."""
    return yaml.safe_load(PATH_FORMS.sub("{PATH}", yaml.safe_dump(value)))


def narrower(drafted, hand):
    """The same mapping but for hand arguments that only carry optional step values."""
    if {k: v for k, v in drafted.items() if k != "args"} != {k: v for k, v in hand.items() if k != "args"}:
        return False
    da, ha = drafted.get("args") or {}, hand.get("args") or {}
    if any(k not in ha or ha[k] != v for k, v in da.items()):
        return False
    return all(isinstance(ha[k], str) and ha[k].startswith("{") for k in set(ha) - set(da))


def differences(drafted, hand):
    if drafted.get("tool") != hand.get("tool"):
        return f"tool {drafted.get('tool')} for {hand.get('tool')}"
    out = []
    da, ha = drafted.get("args") or {}, hand.get("args") or {}
    missing = sorted(set(ha) - set(da))
    extra = sorted(set(da) - set(ha))
    changed = sorted(k for k in set(da) & set(ha) if da[k] != ha[k])
    if missing:
        out.append("without " + ", ".join(f"`{k}`" for k in missing))
    if extra:
        out.append("with " + ", ".join(f"`{k}`" for k in extra))
    for k in changed:
        out.append(f"`{k}: {json.dumps(da[k])}` for `{json.dumps(ha[k])}`")
    for k in ("edit", "capture"):
        if drafted.get(k) != hand.get(k):
            out.append(f"{k} differs" if drafted.get(k) else f"no {k}")
    return "; ".join(out)


def main():
    drafted = yaml.safe_load(open(sys.argv[1])) or {}
    hand = yaml.safe_load(open(sys.argv[2])) or {}
    label = sys.argv[3] if len(sys.argv) > 3 else hand.get("name", "?")
    dcaps, hcaps = drafted.get("capabilities") or {}, hand.get("capabilities") or {}
    right, path_form, narrow, wrong, todo = [], [], [], [], []
    for cap, mapping in hcaps.items():
        if cap not in dcaps:
            todo.append(cap)
        elif shape(dcaps[cap]) == shape(mapping):
            right.append(cap)
        elif path_blind(shape(dcaps[cap])) == path_blind(shape(mapping)):
            path_form.append(cap)
        elif narrower(path_blind(shape(dcaps[cap])), path_blind(shape(mapping))):
            narrow.append(f"{cap} ({differences(dcaps[cap], mapping)})")
        else:
            wrong.append(f"{cap} ({differences(dcaps[cap], mapping)})")
    extra = [c for c in dcaps if c not in hcaps]
    cell = lambda xs: f"{len(xs)}" + (f": {', '.join(xs)}" if xs else "")
    print(
        f"| {label} | {len(right)} / {len(hcaps)} | {cell(right)} | {cell(path_form)} "
        f"| {cell(narrow)} | {cell(wrong)} | {cell(todo)} | {cell(extra) if extra else 0} |"
    )


if __name__ == "__main__":
    main()
