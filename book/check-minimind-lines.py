#!/usr/bin/env python3
"""check-minimind-lines.py: the book's references into MiniMind and into
itself (issue 37, item 5).

    python3 book/check-minimind-lines.py [--minimind DIR] [--aux FILE]

Without --minimind it checks, from the sources alone:
  - every line range of MiniMind's model/model_minimind.py that the book
    quotes ("lines 62--78", "line~205", "lines 213 and 219", a table cell
    "62--78") is a row of tests/golden/minimind/model_minimind_lines.txt,
    the record of what stands on those lines at commit d65ef2c;
  - near each quote (the same paragraph, 250 characters before it or 100
    after) the book names the definition of the row or one of the
    identifiers that stand on those lines;
  - a range of several lines written right after the name of a definition
    ("[[MiniMindModel]], lines 196--232", "[[repeat_kv]] (lines 86--89)") is
    that definition's whole span, unless the prose says it is a part ("the
    core of", "lines of") or the range is a definition that holds it;
  - the record agrees with the table of tests/golden/README.md.
With --minimind DIR (make crosscheck MINIMIND=DIR) it also checks every row
of the record against DIR/model/model_minimind.py: the spans of the
definitions from Python's syntax tree, and the identifiers on the lines.
With --aux FILE (book/check-book.py passes build/book/rope.aux) it checks
that every \\ref and \\pageref of Appendix B resolves to the section or
paragraph whose title it expects (APPENDIX_TARGETS below).
It prints one line per check and exits 1 if any fails."""
import argparse
import ast
import glob
import re
import sys

RECORD = "tests/golden/minimind/model_minimind_lines.txt"
README = "tests/golden/README.md"
APPENDIX = "chapters/96-reading-minimind.nw"
SOURCES = ["rope.nw"] + sorted(glob.glob("chapters/*.nw"))
# The files whose line numbers are MiniMind's: every chapter and the Python
# sources tangled from them (their docstrings quote lines too).

# Each label Appendix B refers to, and words the title of the section or
# paragraph that holds it must contain (letters and digits compared).
APPENDIX_TARGETS = {
    "ch:positions": "Why attention needs positions",
    "ch:attention": "Attention at the speed of the machine",
    "ch:w-python": "the library from Python",
    "sec:rotary-minimind": "RoPE inside MiniMind's attention",
    "sec:rotary-block": "The block-diagonal rotation",
    "sec:rotary-tables": "The frequencies and the tables",
    "sec:rotary-apply": "Applying the rotation",
    "sec:rotary-pairings": "the two pairings",
    "par:rotary-values": "never values",
    "par:rotary-decoding": "Decoding",
    "sec:rotary-golden": "Checking the C code against MiniMind",
    "sec:rotary-precision": "How accurate the tables are",
    "sec:scaling-flavours": "MiniMind's YaRN, line by line",
    "sec:attention-fused": "Fused RoPE and grouped heads",
    "sec:attention-cost": "The computation and its cost",
    "sec:attention-tests": "Accuracy and the tests",
    "sec:w-python-crosscheck": "The crosscheck",
    "sec:w-python-forward": "The whole layer",
    "sec:minimind-python": "Running MiniMind beside the C",
    "sec:mm-forward": "The forward pass",
    "sec:mm-cache": "What the cache holds",
    "sec:mm-generate": "Generating tokens",
}

failures = 0


def report(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures += 1


def read_record():
    rows = {}
    with open(RECORD, encoding="ascii") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            words = line.split()
            first, last, kind, name = int(words[0]), int(words[1]), words[2], words[3]
            has, also = [], []
            for w in words[4:]:
                if w.startswith("has="):
                    has = w[4:].split(",")
                if w.startswith("also="):
                    also = w[5:].split(",")
            rows[(first, last)] = {"kind": kind, "name": name, "has": has,
                                   "also": also}
    return rows


def plain(text):
    """The prose with its markup reduced to the identifiers a reader sees."""
    text = text.replace("\\_", "_").replace("[[", "").replace("]]", "")
    text = re.sub(r"\\(?:cid|texttt|mbox|file)\{", "", text)
    return text


QUOTE = re.compile(r"\b([Ll]ines?)[~ ]+(\d+)(?:\s*(?:--|-)\s*(\d+))?"
                   r"(?:\s+and\s+(\d+))?")
CELL = re.compile(r"(?:&|,)\s*(\d+)--(\d+)\b")
IDENT_BEFORE = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)[\s,(}]*(?:lines?[~ ]+)?$")


def quotes_in(path, text):
    """(range, position) of each MiniMind line range quoted in the text."""
    found = []
    for m in QUOTE.finditer(text):
        if text.startswith(":", m.end()):
            continue  # "line 20: ...", a line of a message, not of MiniMind
        a = int(m.group(2))
        b = int(m.group(3)) if m.group(3) else a
        found.append(((a, b), m.start()))
        if m.group(4):
            found.append(((int(m.group(4)), int(m.group(4))), m.start(4)))
    # the tables of the chapters and of Appendix B write bare ranges
    if path in ("chapters/03-rope.nw", APPENDIX):
        for m in CELL.finditer(text):
            found.append(((int(m.group(1)), int(m.group(2))), m.start()))
    return found


def mentions_minimind(text, pos):
    """Only quotes in a paragraph that speaks of MiniMind's file count."""
    start = text.rfind("\n\n", 0, pos)
    end = text.find("\n\n", pos)
    para = text[start if start >= 0 else 0:end if end >= 0 else len(text)]
    return re.search(r"MiniMind|minimind|d65ef2c", para) is not None, para


def check_quotes(rows):
    defs = {}
    for (a, b), row in rows.items():
        if row["kind"] == "def":
            defs[row["name"]] = (a, b)
    count, bad = 0, []
    files = SOURCES + sorted(glob.glob("python/*.py"))
    for path in files:
        with open(path, encoding="ascii") as f:
            text = plain(f.read())
        for (a, b), pos in quotes_in(path, text):
            near, para = mentions_minimind(text, pos)
            if not near:
                continue
            count += 1
            where = "%s:%d: %d--%d" % (path, text.count("\n", 0, pos) + 1, a, b)
            row = rows.get((a, b))
            if row is None:
                bad.append(where + ": not in " + RECORD)
                continue
            window = text[max(0, pos - 250):pos + 100]
            names = [row["name"], row["name"].split(".")[0],
                     row["name"].split(".")[-1]] + row["has"] + row["also"]
            if row["kind"] == "defs":
                names += row["name"].split(",")
            if not any(re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])"
                                 % re.escape(n), window) for n in names):
                bad.append(where + ": no mention of %s near it" % ", ".join(names))
            m = IDENT_BEFORE.search(text[max(0, pos - 40):pos])
            qualified = m and re.search(r"(core|part|inside|within|branch|lines) of\s*$",
                                        text[max(0, pos - 80):pos - len(m.group(0))])
            inner = m and m.group(1) in defs and row["kind"] in ("def", "defs") \
                and a <= defs[m.group(1)][0] and defs[m.group(1)][1] <= b
            if m and b > a and m.group(1) in defs and defs[m.group(1)] != (a, b) \
                    and not qualified and not inner:
                bad.append(where + ": written after %s, which spans %d--%d"
                           % ((m.group(1),) + defs[m.group(1)]))
    report(count > 0 and not bad, "%d quoted MiniMind line ranges are in the "
           "record, next to what stands there" % count)
    for line in bad[:20]:
        print("        " + line)


def check_readme(rows):
    """The function table of the golden README against the record."""
    bad, count = [], 0
    with open(README, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*`([^`]*)`[^|]*\|\s*(\d+)(?:-(\d+))?\s*\|", line)
            if not m:
                continue
            count += 1
            name = m.group(1).split("(")[0]
            a = int(m.group(2))
            b = int(m.group(3)) if m.group(3) else a
            row = rows.get((a, b))
            # A row names a definition (its whole span) or, as the row of
            # MiniMindModel (205-219: where the table is built and sliced),
            # lines inside one.
            if row is None or row["kind"] not in ("def", "in") or \
                    row["name"].split(".")[0] not in (name, name.split(".")[0]):
                bad.append("%s %d-%d: the record has %s" % (name, a, b, row))
    report(count > 0 and not bad, "%d rows of %s agree with the record"
           % (count, README))
    for line in bad:
        print("        " + line)


def definitions(tree):
    """Every class and function, by dotted name and by bare name."""
    spans = {}

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef)):
                name = prefix + child.name
                span = (child.lineno, child.end_lineno)
                spans[name] = span
                spans.setdefault(child.name, span)
                walk(child, name + ".")
    walk(tree, "")
    return spans


def check_file(rows, minimind):
    path = minimind.rstrip("/") + "/model/model_minimind.py"
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.split("\n")
    spans = definitions(ast.parse(source))
    bad = []
    for (a, b), row in sorted(rows.items()):
        where = "%d--%d %s %s" % (a, b, row["kind"], row["name"])
        if row["kind"] == "def":
            if spans.get(row["name"]) != (a, b):
                bad.append(where + ": the file has %s" % (spans.get(row["name"]),))
        elif row["kind"] == "defs":
            names = row["name"].split(",")
            got = [spans.get(n) for n in names]
            if None in got or got[0][0] != a or got[-1][1] != b:
                bad.append(where + ": the file has %s" % got)
        else:
            outer = spans.get(row["name"])
            if outer is None or not outer[0] <= a <= b <= outer[1]:
                bad.append(where + ": outside %s" % (outer,))
            text = "\n".join(lines[a - 1:b])
            for ident in row["has"]:
                if not re.search(r"\b%s\b" % re.escape(ident), text):
                    bad.append(where + ": no %s on those lines" % ident)
    report(not bad, "%d rows of the record agree with %s" % (len(rows), path))
    for line in bad:
        print("        " + line)


def check_appendix(aux):
    def key(s):
        return re.sub(r"[^a-z0-9]", "", s.lower())
    labels = {}
    with open(aux, encoding="latin-1") as f:
        for line in f:
            m = re.match(r"\\newlabel\{([^}]*)\}\{\{([^}]*)\}\{([^}]*)\}\{(.*)\}\{[^}]*\}\{[^}]*\}\}\s*$", line)
            if m:
                labels[m.group(1)] = (m.group(2), m.group(4))
    with open(APPENDIX, encoding="ascii") as f:
        text = f.read()
    used = sorted(set(re.findall(r"\\(?:page)?ref\{([^}]*)\}", text)))
    bad = []
    for label in used:
        if label not in APPENDIX_TARGETS:
            bad.append("%s: not in APPENDIX_TARGETS (say which title it "
                       "must point to)" % label)
        elif label not in labels:
            bad.append("%s: no such label in %s" % (label, aux))
        elif key(APPENDIX_TARGETS[label]) not in key(labels[label][1]):
            bad.append("%s: resolves to %s '%s', expected '%s'"
                       % (label, labels[label][0], labels[label][1],
                          APPENDIX_TARGETS[label]))
    report(used and not bad, "%d references of Appendix B resolve to the "
           "titles they expect" % len(used))
    for line in bad:
        print("        " + line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minimind")
    parser.add_argument("--aux")
    args = parser.parse_args()
    rows = read_record()
    check_quotes(rows)
    check_readme(rows)
    if args.minimind:
        check_file(rows, args.minimind)
    if args.aux:
        check_appendix(args.aux)
    print("check-minimind-lines: %d check%s failed"
          % (failures, "" if failures == 1 else "s"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
