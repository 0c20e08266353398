#!/usr/bin/env python3
"""check-book.py: checks the shape of the built book (make check-book).

Run from the project root after make book.  It checks what the
book-structure issue asks of the PDF and of the Part I sources:
  - the contents show Part I (chapters 1, 2, ...) and Part II (chapters
    W1, W2, ...), then the appendices;
  - in each Part I chapter file (chapters/0N-*.nw) the lines inside code
    chunks are at most 35% of the file's lines;
  - each Part I chapter is at most 40 printed pages, chapter 5 at most 30;
  - at least 99.5% of the non-blank lines of each library file
    (generated/lib/*.c) appear verbatim (whitespace collapsed) as lines of
    the PDF's text, and the text has no guillemets; the comments naming
    the book's sections, which the clean tangle adds and the PDF does not
    print, are left out: they are exactly the lines of the file that a
    tangle of the same root without them lacks;
  - each such section comment in generated/ and python/ names a number
    and title that the contents give, or an unnumbered chapter of them;
  - the PDF has a title, an author and a subject;
  - no index page carries the running head of the bibliography;
  - every exercise hint that names a section, as "section N.M (Title)",
    names it by the number and title the contents give it;
  - every MiniMind line range the book quotes, and every reference of
    Appendix B, by book/check-minimind-lines.py (with the LaTeX aux file).
It prints one line per check and exits 1 if any fails."""
import functools
import glob
import re
import subprocess
import sys

PDF = "book/rope.pdf"
MAX_CODE_SHARE = 0.35
MAX_PAGES = 40
# Chapter 5 keeps the idea and the teaching kernel; its speed paths,
# measurements and machinery are in chapters W5, W5b and W5c (issue 36).
MAX_PAGES_OF = {"5": 32}
MIN_VERBATIM = 0.995

failures = 0


def report(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures += 1


def pdftotext(*args):
    run = subprocess.run(["pdftotext", *args, PDF, "-"], capture_output=True,
                         text=True, check=True)
    return run.stdout


def code_share(path):
    """Lines inside code chunks over the lines counted.  A line '<<name>>='
    opens a chunk and '@' or '@ ...' closes it; neither is counted.  Every
    other line is code inside a chunk and documentation outside one."""
    code = doc = 0
    inside = False
    with open(path, encoding="ascii") as f:
        for line in f:
            if re.match(r"^<<.*>>=\s*$", line):
                inside = True
            elif re.match(r"^@( |$)", line):
                inside = False
            elif inside:
                code += 1
            else:
                doc += 1
    return code, code + doc


def contents_entries():
    """The chapter-level entries of the contents: (label, title, page),
    label being 'Part I', '3', 'W3', 'A' or '' for an unnumbered chapter.
    Section entries (3.1, W3.2, ...) are skipped."""
    toc = pdftotext("-layout", "-l", "20")
    entries = []
    for line in toc.splitlines():
        m = re.match(r"^\s*(Part [IVX]+|W?\d+[a-z]?|[A-H])?\s*([A-Z][^.]*?)[\s.]+(\d+)\s*$",
                     line)
        if not m or re.match(r"^\s*W?\d+[a-z]?\.\d", line):
            continue
        entries.append((m.group(1) or "", m.group(2).strip(), int(m.group(3))))
        if m.group(2).strip().startswith("Index of concepts"):
            break
    return entries


def check_contents(entries):
    labels = [e[0] for e in entries if e[0]]
    ok = "Part I" in labels and "Part II" in labels
    if ok:
        i, ii = labels.index("Part I"), labels.index("Part II")
        part1 = [x for x in labels[i + 1:ii] if x.isdigit()]
        # a Part I chapter may have more than one workshop: W5, W5b, W5c
        part2 = [x for x in labels[ii + 1:]
                 if x.startswith("W") and not x[-1].isalpha()]
        after = [x for x in labels[ii + 1:] if re.fullmatch(r"[A-H]", x)]
        ok = (part1 == [str(n) for n in range(1, len(part1) + 1)]
              and len(part1) >= 5
              and part2[:len(part1)] == ["W%d" % n for n in range(1, len(part1) + 1)]
              and part2 == ["W%d" % n for n in range(1, len(part2) + 1)]
              and len(after) >= 1
              and labels.index(after[0]) > labels.index(part2[-1]))
        report(ok, "contents: Part I chapters %s, Part II chapters %s, then "
               "appendices %s" % (",".join(part1), ",".join(part2),
                                  ",".join(after)))
    else:
        report(False, "contents show Part I and Part II")


def check_lengths(entries):
    for (label, title, page), nxt in zip(entries, entries[1:]):
        if label.isdigit():
            pages = nxt[2] - page
            most = MAX_PAGES_OF.get(label, MAX_PAGES)
            report(0 < pages <= most, "chapter %s (%s) is %d pages (at most %d)"
                   % (label, title, pages, most))


def check_code_share():
    for path in sorted(glob.glob("chapters/0[1-9]-*.nw")):
        code, total = code_share(path)
        report(code <= MAX_CODE_SHARE * total,
               "%s: %d of %d lines in code chunks, %.1f%% (at most %d%%)"
               % (path, code, total, 100.0 * code / total, 100 * MAX_CODE_SHARE))


NW = ["rope.nw"] + sorted(glob.glob("chapters/*.nw"))
SECTION_COMMENT = re.compile(r"\s*(?:/\* (.*) \*/|# (.*))")


@functools.lru_cache(maxsize=None)
def section_comments(path):
    """The lines of a committed tangled file, and the indices of those that
    the clean tangle's section comments added (the frame of the workshop,
    "Generated files and line directives"): the lines missing from a
    tangle of the same root without them, which must be a subsequence of
    the file.  The third value says whether every added line has the
    shape of a comment and the rest is that plain tangle."""
    run = subprocess.run(["notangle", "-R" + path, *NW], capture_output=True,
                         text=True)
    plain = run.stdout.split("\n")
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n")
    added, j = set(), 0
    for i, line in enumerate(lines):
        if j < len(plain) and line == plain[j]:
            j += 1
        else:
            added.add(i)
    ok = (run.returncode == 0 and j == len(plain)
          and all(SECTION_COMMENT.fullmatch(lines[i]) for i in added))
    return lines, added, ok


def check_verbatim(text):
    def norm(s):
        return re.sub(r"\s+", " ", s).strip()
    lines = {norm(l) for l in text.splitlines()}
    for path in sorted(glob.glob("generated/lib/*.c")):
        code, added, ok = section_comments(path)
        report(ok, "%s: its plain tangle with %d section comments added, "
               "nothing else" % (path, len(added)))
        want = [norm(l) for i, l in enumerate(code) if i not in added and norm(l)]
        missing = [l for l in want if l not in lines]
        found = len(want) - len(missing)
        report(found >= MIN_VERBATIM * len(want),
               "%s: %d of %d lines verbatim in the PDF's text" % (path, found, len(want)))
        for l in missing[:5]:
            print("        missing: %s" % l)
        notes = [norm(code[i]) for i in sorted(added)]
        unmapped = [l for l in notes if l not in lines]
        report(not unmapped, "%s: its %d section comments in the PDF's text "
               "(the map of the library)" % (path, len(notes)))
        for l in unmapped[:5]:
            print("        missing: %s" % l)
    report("\u00ab" not in text and "\u00bb" not in text, "no guillemets in the PDF's text")


def check_section_names(toc_text):
    """Each section comment of the tangled files names a heading as the
    contents print it: 'W5.2 The bfloat16 path' a numbered entry with that
    title, 'The frame of the workshop / The test runner' an entry for its
    first title.  Titles are compared by their letters and digits only
    (the PDF sets dashes, quotes and formulas)."""
    def key(s):
        return re.sub(r"[^a-z0-9]", "", s.lower())
    numbered, titles = {}, set()
    toc = toc_text.replace("\f", "\n").splitlines()
    start = [k for k, line in enumerate(toc) if line.strip() == "Contents"]
    held = ""
    for line in toc[start[0] + 1 if start else 0:]:
        if "Index of concepts" in line:
            break
        if not re.search(r"\s(\d+|[ivxl]+)\s*$", line):
            if line.strip() and "Contents" not in line:
                held += line + " "             # a title on two lines
            continue
        m = re.match(r"^\s*(?:(W?\d+[a-z]?(?:\.\d+)*|[A-H](?:\.\d+)*)\s+)?(.*?)[\s.]+(\d+|[ivxl]+)\s*$",
                     held + line)
        held = ""
        if m.group(1):
            numbered[m.group(1)] = key(m.group(2))
        titles.add(key(m.group(2)))
    files = sorted(glob.glob("generated/**/*.*", recursive=True)
                   + glob.glob("python/*.py"))
    count, bad = 0, []
    for path in files:
        code, added, ok = section_comments(path)
        if not ok:
            bad.append("%s: differs from its tangle by more than comments" % path)
            continue
        for i in sorted(added):
            m = SECTION_COMMENT.fullmatch(code[i])
            first = (m.group(1) or m.group(2)).split(" / ")[0]
            n = re.match(r"(W?\d+[a-z]?(?:\.\d+)*|[A-H](?:\.\d+)*) (.*)", first)
            count += 1
            if n and numbered.get(n.group(1)) != key(n.group(2)) \
                    or not n and key(first) not in titles:
                bad.append("%s:%d: %s" % (path, i + 1, code[i].strip()))
    report(count > 0 and not bad, "%d section comments in %d tangled files name "
           "headings of the contents" % (count, len(files)))
    for b in bad[:10]:
        print("        " + b)


def check_metadata():
    info = subprocess.run(["pdfinfo", PDF], capture_output=True, text=True,
                          check=True).stdout
    for key in ("Title", "Author", "Subject"):
        m = re.search(r"^%s:[ \t]*(.*)$" % key, info, re.M)
        report(bool(m and m.group(1).strip()), "PDF metadata %s: %s"
               % (key, m.group(1).strip() if m else "(none)"))


def check_index_heads(text):
    pages = text.split("\f")
    start = None
    for i, p in enumerate(pages):
        if re.search(r"^Index of chunks\s*$", p, re.M) and i > 20:
            start = i
            break
    if start is None:
        report(False, "the index of chunks was found")
        return
    bad = [i + 1 for i, p in enumerate(pages[start:], start)
           if p.strip() and "Bibliography" in p.strip().splitlines()[0]]
    report(not bad, "no index page (from page %d) has the running head "
           "'Bibliography'%s" % (start + 1, "" if not bad else ": pages %s" % bad))


def check_hints(entries_text):
    """The exercise tests tell a learner which section to reread.  Their
    numbers are typed in C strings, so a section added before it would
    make them stale: check each against the contents."""
    def norm(s):
        return re.sub(r"\s+", " ", s).strip()
    toc = {}
    for line in entries_text.splitlines():
        m = re.match(r"^\s*(\d+\.\d+)\s+(.*?)[\s.]*\d+\s*$", line)
        if m:
            toc[m.group(1)] = norm(m.group(2))
    bad = []
    count = 0
    for path in sorted(glob.glob("generated/tests/test-exercises-*.c")):
        with open(path, encoding="ascii") as f:
            src = f.read()
        # join adjacent string literals, as the compiler does
        src = re.sub(r'"\s*\n\s*"', "", src)
        for num, title in re.findall(r"section (\d+\.\d+) \(([^)]*)\)", src):
            count += 1
            if toc.get(num) != norm(title):
                bad.append("%s: section %s (%s), contents: %s" % (path, num, title, toc.get(num)))
    report(count > 0 and not bad, "%d exercise hints name their section by its number "
           "and title in the contents" % count)
    for b in bad[:10]:
        print("        " + b)


def main():
    text = pdftotext()
    entries = contents_entries()
    check_contents(entries)
    check_lengths(entries)
    check_code_share()
    check_verbatim(text)
    check_metadata()
    check_index_heads(text)
    toc = pdftotext("-layout", "-l", "20")
    check_hints(toc)
    check_section_names(toc)
    lines = subprocess.run([sys.executable, "book/check-minimind-lines.py",
                            "--aux", "build/book/rope.aux"],
                           capture_output=True, text=True)
    print(lines.stdout.rsplit("check-minimind-lines:", 1)[0], end="")
    report(lines.returncode == 0, "book/check-minimind-lines.py passes")
    print("check-book: %d check%s failed" % (failures, "" if failures == 1 else "s"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
