#!/usr/bin/python3
# The HTML edition / The converter
# nw2html.py: the HTML edition of the rope book.
import html, json, os, re, shutil, subprocess, sys

MINIMIND = ("https://github.com/jingyaogong/minimind/blob/d65ef2c/"
            "model/model_minimind.py")
KATEX = "/usr/share/javascript/katex"
# The HTML edition / The converter / The stream
# ---- the noweb pipeline
def noweb_stream(files):
    cmd = ("/usr/lib/noweb/markup " + " ".join(files) +
           " | /usr/lib/noweb/finduses | /usr/lib/noweb/noidx -delay")
    out = subprocess.run(["bash", "-o", "pipefail", "-c", cmd],
                         stdout=subprocess.PIPE, check=True)
    return out.stdout.decode("ascii").split("\n")
# ---- placeholders: words that pandoc passes through unchanged
PH = []
MATH = []               # (tex, display) of every formula, rendered at the end
def token(htm):
    PH.append(htm)
    return "ROPEPH%dX" % (len(PH) - 1)

def ref(label):
    # a link target resolved once every page is written
    return "\x01REF:" + label + "\x02"
def parse_stream(lines):
    items, chunks = [], []
    mode, buf, line, quote = None, [], [], None
    pending, ident, chunk = None, None, None
    def out(s):
        if quote is not None: quote.append(s)
        elif mode == "code": line.append(s)
        else: buf.append(s)
    for raw in lines:
        kw, _, arg = raw.partition(" ")
        if kw == "@begin":
            mode = arg.split()[0]; buf = []; line = []
            if mode == "code":
                chunk = {"label": None, "name": "", "lines": [], "prev": None,
                         "next": None, "uses": [], "defs": [], "root": False}
        elif kw == "@end":
            if mode == "code":
                if line: chunk["lines"].append("".join(line))
                chunks.append(chunk)
                items.append(("code", chunk))
            else:
                items.append(("doc", "".join(buf)))
            mode = None
        elif kw == "@text":
            if mode == "code" or quote is not None:
                if ident and arg == ident[0]:
                    out('<a class="id" href="%s">%s</a>'
                        % (ref(ident[1]), html.escape(arg)))
                else:
                    out(html.escape(arg.expandtabs(8)))
                ident = None
            else:
                buf.append(arg)
        elif kw == "@nl":
            if mode == "code" and quote is None:
                chunk["lines"].append("".join(line)); line = []
            elif quote is not None: quote.append(" ")
            else: buf.append("\n")
        elif kw == "@quote":
            quote = []
        elif kw == "@endquote":
            buf.append(token('<code>%s</code>' % "".join(quote)))
            quote = None
        elif kw == "@xref":
            sub, _, val = arg.partition(" ")
            if sub == "label" and mode == "code" and chunk["label"] is None:
                chunk["label"] = val
            elif sub == "ref": pending = val
            elif sub == "prevdef": chunk["prev"] = val
            elif sub == "nextdef": chunk["next"] = val
            elif sub == "useitem" and mode == "code": chunk["uses"].append(val)
            elif sub == "defitem" and mode == "code": chunk["defs"].append(val)
            elif sub == "notused" and mode == "code": chunk["root"] = True
        elif kw == "@defn":
            chunk["name"] = arg
        elif kw == "@use":
            out('<a class="use" href="%s">&#x27E8;%s \x01NUM:%s\x02&#x27E9;</a>'
                % (ref(pending), name_html(arg), pending))
        elif kw == "@index":
            sub, _, val = arg.partition(" ")
            if sub == "use": ident = (val, pending)
            elif sub == "defn" and mode == "code":
                chunk.setdefault("idents", []).append(val)
    return items, chunks
# The HTML edition / The converter / Chunks as HTML
# ---- chunks as HTML
def name_html(name):
    """A chunk name: quoted code, file names and formulas as in the PDF."""
    parts = re.split(r"(\[\[.+?\]\](?!\])|\$[^$]+\$|\\file\{[^}]*\})", name)
    out = []
    for p in parts:
        if p.startswith("[["): out.append("<code>%s</code>" % html.escape(p[2:-2]))
        elif p.startswith("\\file{"):
            out.append("<code>%s</code>" % html.escape(p[6:-1]))
        elif p.startswith("$"):
            MATH.append((p[1:-1], False))
            out.append("\x01MATH:%d\x02" % (len(MATH) - 1))
        else: out.append(html.escape(p))
    return "".join(out)

def chunk_html(c, num):
    n = num[c["label"]]
    eq = "+&equiv;" if c["prev"] else "&equiv;"
    head = ('<div class="chunkhead"><a class="chunkname" href="%s">'
            '&#x27E8;%s %d&#x27E9;</a>%s</div>'
            % (ref(c["label"]), name_html(c["name"]), n, eq))
    body = "\n".join(c["lines"]).strip("\n")
    notes = []
    if len(c["defs"]) > 1:
        notes.append("Defined in " + ", ".join(
            '<a href="%s">%d</a>' % (ref(d), num[d]) for d in c["defs"]) + ".")
    if c["uses"]:
        notes.append("Used in " + ", ".join(
            '<a href="%s">%d</a>' % (ref(u), num[u]) for u in c["uses"]) + ".")
    elif c["root"]:
        notes.append("Root chunk: the file %s." % html.escape(c["name"]))
    return ('<div class="chunk" id="%s">%s<pre><code>%s</code></pre>'
            '<div class="chunkref">%s</div></div>'
            % (c["label"], head, body, " ".join(notes)))
# The HTML edition / The converter / Reading LaTeX
# ---- balanced braces
def group(s, i):
    """The text of the brace group starting at s[i] == '{', and its end."""
    assert s[i] == "{", s[i:i + 40]
    depth, j = 0, i
    while True:
        ch = s[j]
        if ch == "\\": j += 2; continue
        if ch == "{": depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0: return s[i + 1:j], j + 1
        j += 1

def skip_opt(s, i):
    if i < len(s) and s[i] == "[":
        return s.index("]", i) + 1
    return i

def replace_cmd(s, name, nargs, fn, opt=False):
    """Replace every \\name{a1}...{an} by fn(a1, ..., an)."""
    pat = re.compile(r"\\" + name + r"(?![a-zA-Z])\*?")
    out, pos = [], 0
    while True:
        m = pat.search(s, pos)
        if not m: break
        i, args = m.end(), []
        if opt: i = skip_opt(s, i)
        ok = True
        for _ in range(nargs):
            while i < len(s) and s[i] in " \n": i += 1
            if i >= len(s) or s[i] != "{": ok = False; break
            a, i = group(s, i); args.append(a)
        out.append(s[pos:m.start()])
        out.append(fn(*args) if ok else s[m.start():m.end()])
        pos = i if ok else m.end()
    out.append(s[pos:])
    return "".join(out)

def strip_comments(s):
    return re.sub(r"(?<!\\)%.*\n[ \t]*", "", s)
# ---- macros: zero-argument definitions of the preamble and the chapters
def collect_macros(tex):
    macros = {}
    for m in re.finditer(r"\\(?:newcommand|renewcommand|providecommand)"
                         r"\{?\\([a-zA-Z]+)\}?\{", tex):
        body, _ = group(tex, m.end() - 1)
        if "#" not in body: macros[m.group(1)] = body
    for m in re.finditer(r"\\def\\([a-zA-Z]+)\{", tex):
        body, _ = group(tex, m.end() - 1)
        macros[m.group(1)] = body
    for m in re.finditer(r"\\DeclareMathOperator\{\\([a-zA-Z]+)\}\{", tex):
        body, _ = group(tex, m.end() - 1)
        macros[m.group(1)] = "\\operatorname{%s}" % body
    for k in ("datadir", "indexname"): macros.pop(k, None)
    return macros

def expand_macros(s, macros):
    if not macros: return s
    pat = re.compile(r"\\(" + "|".join(sorted(macros, key=len, reverse=True))
                     + r")(?![a-zA-Z])")
    for _ in range(4):
        t = pat.sub(lambda m: macros[m.group(1)] if
                    macros[m.group(1)][:1] in "^_" else
                    "{" + macros[m.group(1)] + "}", s)
        if t == s: break
        s = t
    return s

def read_values(datadir):
    vals = {}
    def load(path):
        with open(path) as f: text = f.read()
        for m in re.finditer(r"\\ropedef\{([^}]*)\}\{", text):
            vals[m.group(1)], _ = group(text, m.end() - 1)
        for m in re.finditer(r"\\input\{\\datadir\s*([^}]*)\}", text):
            load(os.path.join(datadir, m.group(1).strip()))
    load(os.path.join(datadir, "numbers.tex"))
    return vals

def read_aux(path):
    labels, cites = {}, {}
    with open(path) as f: text = f.read()
    for m in re.finditer(r"\\newlabel\{([^}]*)\}\{\{", text):
        num, j = group(text, m.end() - 1)
        page, _ = group(text, j)
        labels[m.group(1)] = (num, page)
    for m in re.finditer(r"\\bibcite\{([^}]*)\}\{", text):
        c, _ = group(text, m.end() - 1)
        cites[m.group(1)] = group(c, 0)[0] if c.startswith("{") else c
    return labels, cites
# The HTML edition / The converter / Mathematics
# ---- mathematics: find it, number it, render it with KaTeX
MATHENVS = ("equation", "equation*", "align", "align*", "gather", "gather*")

def segments(s):
    """Split LaTeX into ('text', t), ('inline', m), ('display', env, m)."""
    out, i, start = [], 0, 0
    def push_text(j):
        if j > start: out.append(("text", s[start:j], s[start:j]))
    while i < len(s):
        c = s[i]
        if c == "\\" and s.startswith("\\begin{", i):
            env = s[i + 7:s.index("}", i)]
            if env in MATHENVS:
                end = s.index("\\end{%s}" % env, i)
                push_text(i)
                stop = end + len("\\end{%s}" % env)
                out.append(("display", env, s[s.index("}", i) + 1:end],
                            s[i:stop]))
                i = start = stop; continue
        if c == "\\" and i + 1 < len(s) and s[i + 1] in "([":
            close = "\\)" if s[i + 1] == "(" else "\\]"
            end = s.index(close, i + 2)
            push_text(i)
            if s[i + 1] == "(": out.append(("inline", s[i + 2:end],
                                             s[i:end + 2]))
            else: out.append(("display", "", s[i + 2:end], s[i:end + 2]))
            i = start = end + 2; continue
        if c == "\\": i += 2; continue
        if c == "$":
            if s.startswith("$$", i):
                end = s.index("$$", i + 2)
                push_text(i)
                out.append(("display", "", s[i + 2:end], s[i:end + 2]))
                i = start = end + 2; continue
            j = i + 1
            while s[j] != "$":
                j += 2 if s[j] == "\\" else 1
            push_text(i); out.append(("inline", s[i + 1:j], s[i:j + 1]))
            i = start = j + 1; continue
        i += 1
    push_text(len(s))
    return out

def split_rows(body):
    rows, depth, i, start = [], 0, 0, 0
    while i < len(body):
        if body.startswith("\\begin{", i): depth += 1
        elif body.startswith("\\end{", i): depth -= 1
        elif body[i] == "{": depth += 1
        elif body[i] == "}": depth -= 1
        elif depth == 0 and body.startswith("\\\\", i):
            rows.append(body[start:i]); i += 2; start = i; continue
        if body[i] == "\\": i += 2; continue
        i += 1
    rows.append(body[start:])
    return rows

# The HTML edition / The converter
class Book:
    # The HTML edition / The converter / Mathematics
    def __init__(self, values, labels, cites):
        self.values, self.labels, self.cites = values, labels, cites
        self.concepts = []      # (index entry, page)
        self.figures = []       # (body, number)
        self.vals = {}          # page -> {key: value}
        self.page = None

    def num(self, label):
        return self.labels.get(label, ("??", "??"))

    def val_math(self, key):
        v = self.values[key]
        self.vals[self.page][key] = replace_cmd(
            v, "ref", 1, lambda l: self.num(l)[0])
        v = v.replace("$", "")
        v = re.sub(r"\\ensuremath\{", "{", v)
        return "\\htmlData{val=%s}{%s}" % (key, v)

    def val_text(self, key):
        v = self.values[key]
        self.vals[self.page][key] = replace_cmd(
            v, "ref", 1, lambda l: self.num(l)[0])
        v = replace_cmd(v, "ensuremath", 1, lambda a: "$%s$" % a)
        return (token('<span class="val" data-val="%s">' % key) + v
                + token("</span>"))

    def math_token(self, tex, display):
        tex = replace_cmd(tex, "val", 1, self.val_math)
        tex = replace_cmd(tex, "text", 1, lambda a: "\\text{%s}" % a)
        tex = tex.replace("\\qed", "\\square")
        MATH.append((tex, display))
        return token("\x01MATH:%d\x02" % (len(MATH) - 1))

    def display(self, env, body):
        anchors = []
        def take(lab):
            anchors.append('<span id="%s"></span>' % lab)
            return ""
        rows = split_rows(body) if env.startswith("align") else [body]
        numbered = not env.endswith("*") and env != ""
        out = []
        for row in rows:
            labs = re.findall(r"\\label\{([^}]*)\}", row)
            row = replace_cmd(row, "label", 1, take)
            if numbered and not re.search(r"\\(notag|nonumber)\b", row):
                self.eqno += 1
                n = self.num(labs[0])[0] if labs else "%s.%d" % (
                    self.chapno, self.eqno)
                row += "\\tag{%s}" % n
            out.append(row)
        base = env.rstrip("*") or "equation"
        if base == "equation": base = "equation"
        tex = "\\begin{%s*}%s\\end{%s*}" % (base, "\\\\".join(out), base)
        return "".join(token(a) for a in anchors) + self.math_token(tex, True)
    # ---- the prose of one page
    def link(self, label, text):
        return token('<a href="%s">%s</a>' % (ref(label), html.escape(text)))

    def text(self, t):
        t = replace_cmd(t, "label", 1,
                        lambda l: token('<span id="%s"></span>' % l))
        t = replace_cmd(t, "eqref", 1,
                        lambda l: self.link(l, "(%s)" % self.num(l)[0]))
        t = replace_cmd(t, "ref", 1, lambda l: self.link(l, self.num(l)[0]))
        t = replace_cmd(t, "pageref", 1, lambda l: self.link(l, self.num(l)[1]))
        t = replace_cmd(t, "solref", 1, lambda l: "(Solution: " + self.link(
            l, "page " + self.num(l)[1]) + ".)")
        t = replace_cmd(t, "cite", 1, lambda ks: "[" + ", ".join(
            self.link("cite-" + k.strip(), self.cites.get(k.strip(), "?"))
            for k in ks.split(",")) + "]", opt=True)
        t = replace_cmd(t, "index", 1, lambda a: "")
        for name in ("markboth", "addcontentsline", "addtocontents"):
            t = replace_cmd(t, name, {"markboth": 2, "addcontentsline": 3,
                                      "addtocontents": 2}[name], lambda *a: "")
        for name in ("file", "cid"):
            t = replace_cmd(t, name, 1, lambda a: "\\texttt{%s}" % a)
        t = t.replace("\\qed", token("&#x220E;"))
        t = re.sub(r"\\(noindent|centering|medskip|bigskip|smallskip|"
                   r"phantomsection|cleardoublepage|clearpage|newpage|"
                   r"makeatletter|makeatother|nocite\{[^}]*\}|"
                   r"bibliographystyle\{[^}]*\}|bibliography\{[^}]*\}|"
                   r"printindex|nowebchunks|nowebindex|backmatter|"
                   r"frontmatter|mainmatter|appendix|workshopchaptersresume|"
                   r"workshopchapters|workshopsubchapter\{[a-z]\}|"
                   r"renewcommand\{\\indexname\}\{[^}]*\})(?![a-zA-Z])", "", t)
        t = re.sub(r"\\S(?![a-zA-Z])", lambda m: token("&#xA7;"), t)
        return t

    def minimind_lines(self, para):
        if "MiniMind" not in para and "minimind" not in para: return para
        def sub(m):
            a, b = m.group(2), m.group(3) or m.group(2)
            url = MINIMIND + ("#L%s" % a if a == b else "#L%s-L%s" % (a, b))
            return token('<a class="minimind" href="%s">' % url) + \
                m.group(0) + token("</a>")
        return re.sub(r"\b(lines?)[~ \n]+(\d+)(?:--(\d+))?", sub, para)
    def tables(self, t):
        def colspec(spec):
            cols, i = [], 0
            pre = None
            while i < len(spec):
                c = spec[i]
                if c in "@>!<":
                    g, i = group(spec, i + 1)
                    if c == ">": pre = g
                    continue
                if c in "lcr":
                    cols.append((c, pre == "$")); pre = None
                elif c in "pmb":
                    _, i = group(spec, i + 1)
                    cols.append(("l", pre == "$")); pre = None
                    continue
                i += 1
            return cols
        def tabular(m_spec, body):
            cols = colspec(m_spec)
            if any(math for _, math in cols):
                rows = split_rows(body)
                new = []
                for r in rows:
                    cells = r.split("&")
                    if len(cells) == len(cols):
                        cells = ["$%s$" % c.strip() if math and c.strip()
                                 and "\\midrule" not in c and "\\toprule" not in c
                                 and "\\bottomrule" not in c else c
                                 for c, (_, math) in zip(cells, cols)]
                    new.append("&".join(cells))
                body = "\\\\".join(new)
            return "\\begin{tabular}{%s}%s\\end{tabular}" % (
                "".join(c for c, _ in cols), body)
        out, pos = [], 0
        for m in re.finditer(r"\\begin\{tabular\}\{", t):
            if m.start() < pos: continue
            spec, i = group(t, m.end() - 1)
            end = t.index("\\end{tabular}", i)
            out.append(t[pos:m.start()])
            out.append(tabular(spec, t[i:end]))
            pos = end + len("\\end{tabular}")
        out.append(t[pos:])
        return "".join(out)

    def floats(self, t):
        def fig(m):
            body = m.group(2)
            cap_at = body.find("\\caption")
            caption, label = "", None
            if cap_at >= 0:
                caption, j = group(body, body.index("{", cap_at))
                rest = body[j:]
                body = body[:cap_at] + rest
            lm = re.search(r"\\label\{([^}]*)\}", body)
            if lm:
                label = lm.group(1)
                body = body.replace(lm.group(0), "")
            number = self.num(label)[0] if label else ""
            kind = m.group(1)
            anchor = token('<span id="%s"></span>' % label) if label else ""
            name = "Figure" if kind == "figure" else "Table"
            if kind == "figure":
                body = body.replace("\\centering", "")
                self.figures.append((body.strip(), number))
                k = len(self.figures)
                img = ('<figure class="fig"><img src="fig/fig-%d.svg" '
                       'alt="Figure %s"><figcaption>' % (k, number))
                return ("\n\n" + token(img) + anchor + "\\textbf{%s %s.} %s"
                        % (name, number, caption) + token("</figcaption></figure>")
                        + "\n\n")
            return ("\n\n" + anchor + "\\textbf{%s %s.} %s\n\n" % (
                name, number, caption) + body.replace("\\centering", "")
                + "\n\n")
        return re.sub(r"\\begin\{(figure|table)\}(?:\[[^\]]*\])?(.*?)"
                      r"\\end\{\1\}", fig, t, flags=re.S)

    def exercises(self, t):
        def ex(m):
            self.exno += 1
            lab = re.match(r"\s*\\label\{([^}]*)\}", t[m.end():])
            n = self.num(lab.group(1))[0] if lab else "%s.%d" % (
                self.chapno, self.exno)
            return "\n\n\\textbf{Exercise %s.} " % n
        t = re.sub(r"\\begin\{exercise\}", ex, t)
        t = replace_cmd(t, "begin\\{solution\\}", 1,
                        lambda l: "\n\n\\textbf{Solution to Exercise \\ref{%s}.} "
                        % l)
        return re.sub(r"\\end\{(exercise|solution)\}", "\n\n", t)

    def verbatim(self, t):
        t = re.sub(r"\\begin\{verbatim\}\n?(.*?)\\end\{verbatim\}",
                   lambda m: "\n\n" + token("<pre><code>%s</code></pre>"
                                            % html.escape(m.group(1))) + "\n\n",
                   t, flags=re.S)
        return re.sub(r"\\verb(.)(.*?)\1", lambda m: token(
            "<code>%s</code>" % html.escape(m.group(2))), t)
    def page_body(self, name, tex, chapno):
        self.page, self.chapno, self.eqno, self.exno = name, chapno, 0, 0
        self.vals[name] = {}
        tex = replace_cmd(tex, "valif", 3, lambda k, a, b:
                          a if self.values[k].strip() == "1" else b)
        tex = self.index_entries(tex)
        tex = self.floats(tex)
        tex = self.exercises(tex)
        tex = self.tables(tex)
        tex = "\n\n".join(self.minimind_lines(p) for p in tex.split("\n\n"))
        tex = "".join(replace_cmd(s[1], "val", 1, self.val_text)
                      if s[0] == "text" else s[-1] for s in segments(tex))
        out = []
        for s in segments(tex):
            if s[0] == "text": out.append(self.text(s[1]))
            elif s[0] == "inline": out.append(self.math_token(s[1], False))
            else: out.append("\n\n" + self.display(s[1], s[2]) + "\n\n")
        tex = "".join(out)
        counters, out, pos = [0, 0, 0], [], 0
        pat = re.compile(r"\\(section|subsection|subsubsection)(\*?)\{")
        while True:
            m = pat.search(tex, pos)
            if not m: break
            level = ["section", "subsection", "subsubsection"].index(m.group(1))
            title, end = group(tex, m.end() - 1)
            out.append(tex[pos:m.start()])
            if not m.group(2) and chapno is not None:
                counters[level] += 1
                for k in range(level + 1, 3): counters[k] = 0
                n = ".".join([str(chapno)] + [str(c) for c in counters[:level + 1]])
                title = n + " " + title
            out.append("\\%s*{%s}" % (m.group(1), title))
            pos = end
        out.append(tex[pos:])
        return "".join(out)
    # The HTML edition / The converter / The index of concepts
    def index_entries(self, tex):
        marks = []
        def mark(entry):
            marks.append(entry)
            return "ROPEIDX%dQ" % (len(marks) - 1)
        def anchor(m):
            entry = marks[int(m.group(1))]
            self.concepts.append((entry, self.page))
            if re.search(r"\|see\{", entry): return ""   # no location
            return token('<a class="idx" id="idx-%d"></a>'
                         % (len(self.concepts) - 1))
        def refuse(m):
            sys.exit("nw2html: index entry inside a formula on %s: %s"
                     % (self.page, marks[int(m.group(1))]))
        tex = replace_cmd(tex, "index", 1, mark)
        return "".join(re.sub(r"ROPEIDX(\d+)Q", anchor if sg[0] == "text"
                              else refuse, sg[-1]) for sg in segments(tex))

    def index_text(self, tex):
        out = []
        for sg in segments(tex):
            if sg[0] != "text":
                out.append(self.math_token(sg[1], False))
                continue
            t = re.sub(r"\\[a-zA-Z]+\{([^{}]*)\}", r"\1", sg[1])
            t = t.replace("\\_", "_").replace("---", "\u2014")
            t = t.replace("--", "\u2013").replace("~", " ")
            out.append(html.escape(t.replace("{", "").replace("}", "")))
        return "".join(out)

    def concept_index(self, pages):
        label = {p["file"]: p["num"] or p["title"] for p in pages}
        terms = {}
        for n, (entry, page) in enumerate(self.concepts):
            path, _, fmt = entry.partition("|")
            node = terms
            for part in path.split("!"):
                key, _, shown = part.partition("@")
                k = re.sub(r"[\\{}$]", "", key).lower()
                node = node.setdefault(k, {"shown": shown or key, "at": [],
                                           "see": None, "sub": {}})
                last = node
                node = node["sub"]
            see = re.match(r"see\{(.*)\}$", fmt)
            if see: last["see"] = see.group(1)
            else: last["at"].append((page, n))
        self.page = "index-of-concepts.html"
        self.vals.setdefault(self.page, {})
        def where(t):
            if t["see"]: return " <em>see</em> " + self.index_text(t["see"])
            links, count = [], {}
            for page, n in t["at"]:
                count[page] = count.get(page, 0) + 1
                text = (html.escape(label[page]) if count[page] == 1
                        else "[%d]" % count[page])
                links.append('<a href="%s">%s</a>' % (ref("idx-%d" % n), text))
            return (": " if links else "") + ", ".join(links)
        def items(node):
            return "\n".join(
                "<li>%s%s%s</li>" % (self.index_text(node[k]["shown"]),
                                     where(node[k]),
                                     '<ul>%s</ul>' % items(node[k]["sub"])
                                     if node[k]["sub"] else "")
                for k in sorted(node))
        return '<ul class="index concepts">%s</ul>' % items(terms)

# The HTML edition / The converter / Pages
# ---- pages
def slug(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")

def plain(title):
    t = re.sub(r"\\[a-zA-Z]+\*?", "", title).replace("~", " ")
    return t.replace("--", "\u2013").replace("{", "").replace("}", "")

def split_pages(body):
    """Cut the book at its \\chapter commands; number them as LaTeX does."""
    pat = re.compile(r"\\(part|chapter)(\*?)\{")
    pages, parts = [], []
    mode, n, pos, last, sub = "front", 0, 0, None, ""
    events = list(pat.finditer(body))
    pieces = []
    for m in events:
        title, end = group(body, m.end() - 1)
        pieces.append((m, title, end))
    for k, (m, title, end) in enumerate(pieces):
        before = body[pos:m.start()]
        if last is not None: last["tex"] += before
        switch = before
        if "\\mainmatter" in switch: mode, n = "arabic", 0
        if re.search(r"\\workshopchapters(?![a-zA-Z])", switch):
            mode, n = "W", 0
        subm = re.search(r"\\workshopsubchapter\{([a-z])\}", switch)
        if subm: n, sub = n - 1, subm.group(1)
        if "\\workshopchaptersresume" in switch: sub = ""
        if "\\appendix" in switch: mode, n = "appendix", 0
        if "\\backmatter" in switch: mode = "back"
        if m.group(1) == "part":
            lab = re.match(r"\s*\\label\{([^}]*)\}", body[end:])
            parts.append((len(pages), plain(title), lab.group(1) if lab else None))
            if lab: end += lab.end()
            pos = end
            continue
        numbered = not m.group(2) and mode in ("arabic", "W", "appendix")
        if numbered:
            n += 1
            if mode == "arabic":
                num, fname, label = str(n), "chapter-%d" % n, "Chapter %d" % n
            elif mode == "W":
                num, fname = "W%d%s" % (n, sub), "workshop-%d%s" % (n, sub)
                label = "Chapter W%d%s" % (n, sub)
            else:
                num = chr(ord("A") + n - 1)
                fname, label = "appendix-%s" % num.lower(), "Appendix %s" % num
        else:
            num, fname, label = None, slug(plain(title)), None
        last = {"title": plain(title), "num": num, "file": fname + ".html",
                "label": label, "tex": ""}
        pages.append(last)
        pos = end
    if last is not None: last["tex"] += body[pos:]
    at = last["tex"].find("\\printindex") if last else -1
    if at >= 0:
        last["tex"] = last["tex"][:at]
        pages.append({"title": "Index of concepts", "num": None,
                      "file": "index-of-concepts.html", "label": None,
                      "tex": ""})
    return pages, parts
# The HTML edition / The converter / The three tools
def pandoc(tex):
    r = subprocess.run(["pandoc", "-f", "latex", "-t", "html5", "--wrap=none",
                        "--shift-heading-level-by=1"], input=tex.encode(),
                       stdout=subprocess.PIPE, check=True)
    return r.stdout.decode()

def untoken(h):
    for _ in range(6):
        h = re.sub(r"<p>\s*ROPEPH(\d+)X\s*</p>", lambda m: PH[int(m.group(1))], h)
        h2 = re.sub(r"ROPEPH(\d+)X", lambda m: PH[int(m.group(1))], h)
        if h2 == h: break
        h = h2
    return h

def math_code(m):
    text = html.unescape(re.sub(r"<[^>]*>", "", untoken(PH[int(m.group(1))])))
    special = {"\\": "\\textbackslash{}", "^": "\\^{}", "~": "\\~{}"}
    text = "".join(special.get(c, "\\" + c if c in "_#$%&{}" else c)
                   for c in text)
    return "\\texttt{%s}" % text

def render_math(items, node_script):
    items = [(re.sub(r"ROPEPH(\d+)X", math_code, tex), display)
             for tex, display in items]
    r = subprocess.run(["node", node_script, KATEX + "/katex.js"],
                       input=json.dumps(items).encode(),
                       stdout=subprocess.PIPE, check=True)
    return json.loads(r.stdout.decode())

def compile_figures(figures, preamble, macros_tex, figdir, outdir):
    os.makedirs(figdir, exist_ok=True)
    os.makedirs(os.path.join(outdir, "fig"), exist_ok=True)
    doc = [preamble, macros_tex, "\\begin{document}\n",
           "\\hoffset=-1in \\voffset=-1in\n"]
    for body, _ in figures:
        doc.append("\\setbox0=\\hbox{\\kern6pt %s\\kern6pt}%%\n"
                   "\\pdfpagewidth=\\wd0 \\pdfpageheight=\\ht0 "
                   "\\advance\\pdfpageheight by \\dp0 "
                   "\\advance\\pdfpageheight by 12pt\n"
                   "\\shipout\\vbox{\\kern6pt\\box0\\kern6pt}\n" % body)
    doc.append("\\end{document}\n")
    tex = "".join(doc)
    src = os.path.join(figdir, "figures.tex")
    pdf = os.path.join(figdir, "figures.pdf")
    old = open(src).read() if os.path.exists(src) else None
    if old != tex or not os.path.exists(pdf):
        with open(src, "w") as f: f.write(tex)
        r = subprocess.run(["pdflatex", "-interaction=nonstopmode",
                            "-halt-on-error", "figures.tex"], cwd=figdir,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            sys.stderr.write(r.stdout.decode(errors="replace")[-3000:])
            sys.exit("nw2html: the figures did not compile (%s)" % src)
    pages = int(re.search(r"Pages:\s+(\d+)", subprocess.run(
        ["pdfinfo", pdf], stdout=subprocess.PIPE, check=True)
        .stdout.decode()).group(1))
    if pages != len(figures):
        sys.exit("nw2html: %d figures but %d pages in %s"
                 % (len(figures), pages, pdf))
    # one call for all pages: pdf2svg 0.2.3 finds page 2 and on only so
    subprocess.run(["pdf2svg", pdf, os.path.join(outdir, "fig", "fig-%d.svg"),
                    "all"], check=True)
def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--aux", required=True)
    ap.add_argument("--bbl", required=True)
    ap.add_argument("--figdir", required=True)
    ap.add_argument("--katex-script", required=True)
    ap.add_argument("--css", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    items, chunks = parse_stream(noweb_stream(a.files))
    num = {c["label"]: k + 1 for k, c in enumerate(chunks)}
    whole = "".join(x if kind == "doc" else
                    "\n\n" + token(chunk_html(x, num)) + "\n\n"
                    for kind, x in items)
    b = whole.index("\\begin{document}")
    e = whole.index("\\end{document}")
    preamble, body = whole[:b], whole[b + len("\\begin{document}"):e]
    body = replace_cmd(body, "input", 1, lambda f: open(os.path.join(
        a.data, f.replace("\\datadir", "").strip())).read())
    values = read_values(a.data)
    labels, cites = read_aux(a.aux)
    book = Book(values, labels, cites)
    body = strip_comments(book.verbatim(body))
    macros = collect_macros(strip_comments(preamble) + body)
    local = "".join(m.group(0) + "\n" for m in re.finditer(
        r"^\\(?:providecommand|newcommand)\{?\\[a-zA-Z]+\}?(?:\[\d\])?\{.*\}$",
        body, flags=re.M))
    for name in ("workshopchapters", "workshopsubchapter",
                 "workshopchaptersresume", "cleardoublepage", "file", "val",
                 "ropedef", "solref"):
        macros.pop(name, None)
    body = re.sub(r"^\\(?:providecommand|newcommand|renewcommand)"
                  r"\{?\\[a-zA-Z]+\}?(?:\[\d\])?\{.*\}$", "", body, flags=re.M)
    body = re.sub(r"\\def\\[a-zA-Z]+\{[^\n]*\}", "", body)
    body = expand_macros(body, macros)
    pages, parts = split_pages(body)
    # the references, from the book's own bibliography
    with open(a.bbl) as f: bbl = f.read()
    bbl = re.sub(r"\\bibitem\[[^\]]*\]\{([^}]*)\}", lambda m:
                 "\n\n" + token('<span id="cite-%s" class="bibnum">[%s]</span>'
                                % (m.group(1), cites.get(m.group(1), "?"))), bbl)
    bbl = re.sub(r"\\begin\{thebibliography\}\{[^}]*\}|\\end\{thebibliography\}"
                 r"|\\providecommand.*|\\expandafter.*|\\newblock"
                 r"|\\natexlab\{([^}]*)\}", lambda m: m.group(1) or "", bbl)
    pages.append({"title": "References", "num": None, "file": "references.html",
                  "label": None, "tex": bbl})
    os.makedirs(a.out, exist_ok=True)
    for p in pages:
        p["html"] = pandoc(book.page_body(p["file"], p["tex"], p["num"]))
    preamble = re.sub(r"\\newcommand\{\\datadir\}\{[^}]*\}", lambda m:
                      "\\newcommand{\\datadir}{%s/}" % os.path.abspath(a.data),
                      strip_comments(preamble))
    compile_figures(book.figures, preamble, local, a.figdir,
                    a.out)
    for p in pages:
        if p["title"] == "Index of concepts":
            p["html"] += book.concept_index(pages)
        if p["title"] == "Index of chunks": p["html"] += chunk_index(chunks, num)
        if p["title"] == "Index of identifiers":
            p["html"] += ident_index(chunks, num)
    rendered = render_math(MATH, a.katex_script)
    def fill(h):
        h = untoken(h)
        h = re.sub(r"\x01NUM:([^\x02]*)\x02", lambda m: str(num[m.group(1)]), h)
        return re.sub(r"\x01MATH:(\d+)\x02", lambda m: rendered[int(m.group(1))], h)
    for p in pages:
        p["html"] = fill(p["html"])
    write_site(a, pages, parts, chunks, num, book)
# The HTML edition / The converter / The site
TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%(title)s - rope</title>
<link rel="stylesheet" href="katex/katex.min.css">
<link rel="stylesheet" href="rope.css">
</head>
<body>
<nav class="top">%(nav)s</nav>
<main>
%(body)s
</main>
<nav class="bottom">%(nav)s</nav>
</body>
</html>
"""

def nav(prev, nxt):
    links = ['<a href="index.html">Contents</a>']
    if prev: links.insert(0, '<a rel="prev" href="%s">&larr; %s</a>'
                          % (prev["file"], html.escape(prev["title"])))
    if nxt: links.append('<a rel="next" href="%s">%s &rarr;</a>'
                         % (nxt["file"], html.escape(nxt["title"])))
    return " ".join(links)

def chunk_index(chunks, num):
    first = {}
    for c in chunks:
        first.setdefault(c["name"], []).append(c["label"])
    rows = []
    for name in sorted(first, key=str.lower):
        labs = first[name]
        rows.append('<li><a href="%s">&#x27E8;%s %d&#x27E9;</a>: %s</li>' % (
            ref(labs[0]), name_html(name), num[labs[0]], ", ".join(
                '<a href="%s">%d</a>' % (ref(l), num[l]) for l in labs)))
    return '<ul class="index">%s</ul>' % "\n".join(rows)

def ident_index(chunks, num):
    defs = {}
    for c in chunks:
        for i in c.get("idents", []):
            defs.setdefault(i, []).append(c["label"])
    return '<ul class="index">%s</ul>' % "\n".join(
        '<li><code>%s</code>: %s</li>' % (html.escape(i), ", ".join(
            '<a href="%s">%d</a>' % (ref(l), num[l]) for l in defs[i]))
        for i in sorted(defs, key=str.lower))

def write_site(a, pages, parts, chunks, num, book):
    # where every anchor lives
    where = {}
    for p in pages:
        head = "<h1>%s%s</h1>\n" % (
            (p["label"] + ". ") if p["label"] else "", html.escape(p["title"]))
        p["html"] = head + p["html"]
        for i in re.findall(r'\sid="([^"]+)"', p["html"]):
            where.setdefault(i, p["file"])
    toc = ['<h1>rope</h1><p class="subtitle">Position encodings in '
           'transformers, from sinusoids to rotary embeddings to a fused '
           'attention kernel. A literate program in C.</p>',
           '<p>This is the HTML edition, one page per chapter, built from '
           'the same noweb sources as the PDF.</p><h2>Contents</h2>']
    for part in parts:
        where.setdefault(part[2], "index.html")
    starts = {k: part for part in parts for k in [part[0]]}
    roman = ["I", "II", "III", "IV", "V"]
    toc.append('<ul class="toc">')
    for k, p in enumerate(pages):
        if k in starts:
            pi = parts.index(starts[k])
            toc.append('<li class="part" id="%s">Part %s: %s</li>' % (
                starts[k][2] or "part-%d" % pi, roman[pi],
                html.escape(starts[k][1])))
        secs = re.findall(r'<h2[^>]*\sid="([^"]+)"[^>]*>(.*?)</h2>', p["html"])
        toc.append('<li class="chapter"><a href="%s">%s%s</a>' % (
            p["file"], (p["label"] + ". ") if p["label"] else "",
            html.escape(p["title"])))
        if secs:
            toc.append('<ul>%s</ul>' % "".join(
                '<li><a href="%s#%s">%s</a></li>' % (p["file"], i, re.sub(
                    r'<span class="katex-mathml">.*?</span></span>', '', t))
                for i, t in secs))
        toc.append("</li>")
    toc.append("</ul>")
    index = {"title": "Contents", "file": "index.html", "html": "\n".join(toc)}
    def resolve(h):
        return re.sub(r"\x01REF:([^\x02]*)\x02", lambda m: (
            "%s#%s" % (where[m.group(1)], m.group(1)) if m.group(1) in where
            else "#unresolved-" + m.group(1)), h)
    for k, p in enumerate([index] + pages):
        seq = [index] + pages
        out = TEMPLATE % {"title": html.escape(p["title"]),
                          "nav": nav(seq[k - 1] if k > 0 else None,
                                     seq[k + 1] if k + 1 < len(seq) else None),
                          "body": resolve(p["html"])}
        with open(os.path.join(a.out, p["file"]), "w") as f: f.write(out)
    shutil.copy(a.css, os.path.join(a.out, "rope.css"))
    kdir = os.path.join(a.out, "katex")
    if os.path.isdir(kdir): shutil.rmtree(kdir)
    os.makedirs(kdir)
    shutil.copy(os.path.join(KATEX, "katex.min.css"), kdir)
    shutil.copytree(os.path.join(KATEX, "fonts"), os.path.join(kdir, "fonts"))
    with open(os.path.join(a.out, "values.json"), "w") as f:
        json.dump(book.vals, f, indent=1, sort_keys=True)
    # Readable by a web server running as another user: shutil.copy keeps
    # the mode of its source, and the style sheet's comes from a
    # temporary file of mode 0600.
    for top, dirs, names in os.walk(a.out):
        for d in dirs: os.chmod(os.path.join(top, d), 0o755)
        for n in names: os.chmod(os.path.join(top, n), 0o644)
    print("nw2html: %d pages, %d chunks, %d formulas, %d figures in %s" % (
        len(pages) + 1, len(chunks), len(MATH), len(book.figures), a.out))

# The HTML edition / The converter
if __name__ == "__main__":
    main()
