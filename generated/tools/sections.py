#!/usr/bin/python3
# The frame of the workshop / Generated files and line directives
# sections.py: in the clean tangle, a comment before each chunk's code
# naming the book's section that prints it.
#   sections.py mark                 a noweb filter: marks each chunk's code
#   sections.py comment DIR FILE...  the marks of DIR/FILE become comments
import re
import sys

MARK = "\x1e"


def fail(message):
    sys.exit("sections.py: " + message)


def mark(lines):
    events = []
    uses, resume = [], set()
    quotes, defined = [], set()
    docs = code = None
    for i, line in enumerate(lines):
        kw, _, arg = line.rstrip("\n").partition(" ")
        if kw == "@begin" and arg.startswith("code"):
            events.append(("code", i))
            code, header, last = [], True, None
        elif kw == "@begin":
            docs, quoting = [], False
        elif kw == "@end" and code is not None:
            resume.discard(last)     # nothing of the chunk follows its last line
            code = None
        elif kw == "@end":
            events.append(("docs", "".join(docs)))
            docs = None
        elif code is not None:
            if kw == "@defn":
                user, first = arg, arg not in defined
                defined.add(arg)
            elif kw in ("@text", "@use"):
                code.append((kw, arg))
            elif kw == "@nl" and header:
                header = False
            elif kw == "@nl":
                used = [a for k, a in code if k == "@use"]
                lone = len(used) == 1 and all(a.strip() == ""
                                              for k, a in code if k == "@text")
                uses += [(u, lone, first, user) for u in used]
                if lone:
                    resume.add(i)
                code, first, last = [], False, i
        elif docs is not None:
            if kw == "@quote":
                quoting = True
                quotes.append("")
                docs.append("\x02%d\x03" % (len(quotes) - 1))
            elif kw == "@endquote":
                quoting = False
            elif quoting and kw == "@text":
                quotes[-1] += arg
            elif kw == "@text":
                docs.append(arg)
            elif kw == "@nl":
                docs.append("\n")
    where, labels = sections(events)
    starts = line_starts(uses)
    out, here, defn = [], None, None
    for i, line in enumerate(lines):
        out.append(line)
        kw, _, arg = line.rstrip("\n").partition(" ")
        if i in where:
            here = name(where[i], quotes, labels)
            defn = None
        elif kw == "@defn":
            defn = arg
        elif kw == "@nl" and defn is not None:
            if here and starts(defn):
                out.append("@text %s%s\n@nl\n" % (MARK, here))
            defn = None
        elif kw == "@nl" and here and i in resume:
            out.append("@text %s%s\n@nl\n" % (MARK, here))
    sys.stdout.write("".join(out))
HEADING = re.compile(r"\\(chapter|section|subsection)(\*?)\s*(\[[^\]]*\])?\s*\{"
                     r"|\\(mainmatter|frontmatter|backmatter|appendix"
                     r"|workshopchaptersresume|workshopchapters)(?![a-zA-Z])"
                     r"|\\workshopsubchapter\{([a-z])\}")


def uncomment(tex):
    return re.sub(r"(?<!\\)%[^\n]*", "", tex)


def sections(events):
    """The heading path of each code chunk, by the line of its @begin,
    and the labels of the numbered headings."""
    book = Counters()
    started = not any("\\begin{document}" in uncomment(value)
                      for kind, value in events if kind == "docs")
    where = {}
    for kind, value in events:
        if kind == "code":
            where[value] = book.where() if started else []
            continue
        value = uncomment(value)
        if not started and "\\begin{document}" in value:
            started = True
            value = value[value.index("\\begin{document}"):]
        if started:
            book.read(value)
    return where, book.labels


class Counters:
    def __init__(self):
        self.mode = "front"     # front, main, workshop, appendix, back
        self.suffix = ""        # W5b: the b of a second workshop chapter
        self.counter = [0, 0, 0]             # chapter, section, subsection
        self.headings = [None, None, None]   # (number or None, title)
        self.labels = {}

    def read(self, tex):
        pos = 0
        for m in HEADING.finditer(tex):
            if m.start() < pos:
                continue
            if m.group(4):
                self.switch(m.group(4))
                continue
            if m.group(5):
                self.counter[0] -= 1
                self.suffix = m.group(5)
                continue
            title, pos = group(tex, m.end() - 1)
            level = ("chapter", "section", "subsection").index(m.group(1))
            number = self.heading(level, m.group(2), title)
            label = re.match(r"\s*\\label\{([^}]*)\}", tex[pos:])
            if number and label:
                self.labels[label.group(1)] = number

    def switch(self, name):
        self.suffix = ""
        if name == "workshopchaptersresume":
            return
        if name in ("appendix", "workshopchapters"):
            self.counter = [0, 0, 0]
        self.mode = {"mainmatter": "main", "frontmatter": "front",
                     "backmatter": "back", "appendix": "appendix",
                     "workshopchapters": "workshop"}[name]

    def heading(self, level, starred, title):
        numbered = not starred and (level > 0
                                    or self.mode not in ("front", "back"))
        if numbered:
            self.counter[level] += 1
            self.counter[level + 1:] = [0] * (2 - level)
        self.headings[level] = (self.number(level) if numbered else None, title)
        self.headings[level + 1:] = [None] * (2 - level)
        return self.headings[level][0]

    def number(self, level):
        chapter = str(self.counter[0])
        if self.mode == "workshop":
            chapter = "W" + chapter + self.suffix
        elif self.mode == "appendix":
            chapter = chr(ord("A") + self.counter[0] - 1)
        return ".".join([chapter] + [str(n) for n in self.counter[1:level + 1]])

    def where(self):
        """The innermost heading, after its unnumbered parents up to the
        nearest numbered one."""
        path = [h for h in self.headings if h]
        numbered = [k for k, (number, _) in enumerate(path) if number]
        return path[numbered[-1]:] if numbered else path
def group(text, at):
    """The contents of the brace group opening at text[at], and its end."""
    depth = 0
    for i in range(at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[at + 1:i], i + 1
    fail("a heading with unbalanced braces: " + text[at:at + 60])
def render(title, quotes, labels):
    def ref(m):
        if m.group(1) not in labels:
            fail("a heading refers to \\ref{%s}, which names no numbered "
                 "chapter or section" % m.group(1))
        return labels[m.group(1)]
    t = re.sub(r"\\ref\{([^}]*)\}", ref, title)
    t = re.sub(r"\\(LaTeX|TeX)(?![a-zA-Z])", r"\1", t)
    t = re.sub(r"\\(ldots|dots)(?![a-zA-Z])", "...", t)
    t = re.sub(r"\\([_&%#$])", r"\1", t)
    t = t.replace("---", "--").replace("--", "-").replace("~", " ")
    t = re.sub(r"\\[a-zA-Z]+\*?|\\.|[{}$]", "", t)
    t = re.sub(r"\x02(\d+)\x03", lambda m: quotes[int(m.group(1))], t)
    return " ".join(t.split())


def name(path, quotes, labels):
    """5.4 The online softmax; or, for an unnumbered heading, the titles
    from its nearest numbered parent (or its chapter) down."""
    return " / ".join((number + " " if number else "")
                      + render(title, quotes, labels) for number, title in path)
def line_starts(uses):
    users = {}
    for used, lone, first, user in uses:
        users.setdefault(used, []).append((lone, first, user))
    known = {}

    def starts(chunk):
        if chunk not in known:
            known[chunk] = False    # a chunk that uses itself: never
            known[chunk] = all(lone and (not first or starts(user))
                               for lone, first, user in users.get(chunk, []))
        return known[chunk]
    return starts
STYLES = {".c": ("/* ", " */"), ".h": ("/* ", " */"), ".js": ("/* ", " */"),
          ".css": ("/* ", " */"), ".py": ("# ", "")}


def comment(path, text):
    ext = re.search(r"\.[a-z]+$", path)
    ext = ext.group(0) if ext else ""
    if ext not in STYLES:
        return "\n".join(l for l in text.split("\n") if MARK not in l)
    left, right = STYLES[ext]
    lex = Lexer(ext)
    out, pending, last = [], None, None
    for line in text.split("\n"):
        at = line.find(MARK)
        if at >= 0:
            if line[:at].strip() or MARK in line[at + 1:]:
                fail("%s: a mark inside a line: %r" % (path, line))
            pending = line[at + 1:]
            continue
        if pending and line.strip() and not (not out and line.startswith("#!")):
            if lex.clean and pending != last:
                indent = line[:len(line) - len(line.lstrip())]
                words = pending.replace("*/", "* /") if right else pending
                out.append(indent + left + words + right)
                last = pending
            pending = None
        out.append(line)
        lex.feed(line)
    return "\n".join(out)
NAMED = re.compile(r"(W?[0-9]+[a-z]?(\.[0-9]+)*|[A-H](\.[0-9]+)*) \S"
                   r"|.* / .*")


def section_comments(path, text):
    ext = re.search(r"\.[a-z]+$", path)
    left, right = STYLES.get(ext.group(0) if ext else "", ("", ""))
    found = []
    for line in text.split("\n"):
        line = line.strip()
        if (left and line.startswith(left) and line.endswith(right)
                and NAMED.match(line[len(left):len(line) - len(right)])):
            found.append(line)
    return found


def tex(text):
    """ASCII text in the book's typewriter font, each character as typed
    (a straight quote stays straight, so that the PDF copies exactly)."""
    special = {"\\": "\\textbackslash{}", "'": "\\textquotesingle{}",
               "`": "\\textasciigrave{}", "~": "\\textasciitilde{}",
               "^": "\\textasciicircum{}", "-": "-{}"}
    return "".join(special.get(c, "\\" + c if c in "_{}#%&$" else c)
                   for c in text)
class Lexer:
    def __init__(self, ext):
        self.python, self.js = ext == ".py", ext == ".js"
        self.state = None           # None, "/*", or the quote of a string
        self.clean = True

    def feed(self, line):
        s, i = self.state, 0
        while i < len(line):
            if s == "/*":
                if line.startswith("*/", i):
                    s, i = None, i + 1
            elif s:
                if line[i] == "\\":
                    i += 1
                elif line.startswith(s, i):
                    s, i = None, i + len(s) - 1
            elif line.startswith("#" if self.python else "//", i):
                break
            elif not self.python and line.startswith("/*", i):
                s, i = "/*", i + 1
            elif line[i] in "\"'" or self.js and line[i] == "`":
                s = line[i]
                if self.python and line.startswith(s * 3, i):
                    s, i = s * 3, i + 2
            i += 1
        continued = re.search(r"(?<!\\)(\\\\)*\\$", line) is not None
        if s in ("\"", "'") and not continued:
            s = None                # such a string ends with its line
        self.state = s
        self.clean = s is None and not continued
if __name__ == "__main__":
    if sys.argv[1:] == ["mark"]:
        mark(sys.stdin.readlines())
    elif len(sys.argv) > 2 and sys.argv[1] == "comment":
        for f in sys.argv[3:]:
            path = sys.argv[2] + "/" + f
            with open(path) as stream:
                text = stream.read()
            with open(path, "w") as stream:
                stream.write(comment(f, text))
    elif len(sys.argv) > 2 and sys.argv[1] == "map":
        print("\\begingroup\\small\\ttfamily\\raggedright")
        for path in sys.argv[2:]:
            with open(path) as stream:
                names = section_comments(path, stream.read())
            print("\\medskip\\noindent %s\\par" % tex(path))
            for c in names:
                print("\\noindent\\hspace*{2em}%s\\par" % tex(c))
        print("\\endgroup")
    else:
        fail("usage: sections.py mark | sections.py comment DIR FILE... "
             "| sections.py map FILE...")
