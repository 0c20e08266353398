#!/usr/bin/python3
# The HTML edition / The converter
# nw2html.py: the HTML edition of the rope book.
import html, html.parser, json, os, re, shutil, subprocess, sys

MINIMIND = ("https://github.com/jingyaogong/minimind/blob/d65ef2c/"
            "model/model_minimind.py")
KATEX = "/usr/share/javascript/katex"
WIDE_INLINE = 60        # characters of TeX: an inline formula this long scrolls
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
IDENTS = []             # (identifier, defining chunks, using chunks)
CHUNKS = {}             # a chunk's label -> its record
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
            elif sub == "entrybegin":
                lab, _, name = val.partition(" ")
                IDENTS.append((name, [], []))
            elif sub == "entrydefn": IDENTS[-1][1].append(val)
            elif sub == "entryuse": IDENTS[-1][2].append(val)
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

def chunk_html(c, num, pieces):
    n = num[c["label"]]
    first = pieces[c["name"]][0]
    eq = "+&equiv;" if c["prev"] else "&equiv;"
    link = lambda l, text, rel="": '<a%s href="%s">%s</a>' % (
        ' rel="%s"' % rel if rel else "", ref(l), text)
    xref, uses = [], CHUNKS[first]["uses"]
    if c["prev"] or c["next"]:
        if uses:
            xref.append("(%s)" % ", ".join(link(u, num[u]) for u in uses))
        if c["prev"]:
            xref.append(link(c["prev"], "&#x25C1; %d" % num[c["prev"]], "prev"))
        if c["next"]:
            xref.append(link(c["next"], "%d &#x25B7;" % num[c["next"]], "next"))
    head = ('<div class="chunkhead"><a class="chunkno" href="%s" '
            'title="chunk %d">%d</a> <a class="chunkname" href="%s">'
            '&#x27E8;%s %d&#x27E9;</a>%s <span class="chunkxref">%s</span>'
            '</div>' % (ref(c["label"]), n, n, ref(first), name_html(c["name"]),
                        num[first], eq, " ".join(xref)))
    body = "\n".join(c["lines"]).strip("\n")
    notes = []
    if len(pieces[c["name"]]) > 1:
        notes.append("Defined in " + ", ".join(
            '<a href="%s">%d</a>' % (ref(d), num[d])
            for d in pieces[c["name"]]) + ".")
    if uses:
        notes.append("Used in " + ", ".join(
            '<a href="%s">%d</a>' % (ref(u), num[u]) for u in uses) + ".")
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
    # a comment and its line end go, unless a blank line follows, which
    # must stay a paragraph break
    s = re.sub(r"(?<!\\)%[^\n]*\n(?![ \t]*\n)[ \t]*", "", s)
    return re.sub(r"(?<!\\)%[^\n]*", "", s)
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
        tex = "\\begin{%s*}%s\\end{%s*}" % (base, "\\\\".join(out), base)
        return "".join(token(a) for a in anchors) + self.math_token(tex, True)
    # ---- the prose of one page
    def link(self, label, text):
        return token('<a href="%s">%s</a>' % (ref(label), html.escape(text)))

    def where(self, label, prose=True):
        # "section 3.5", resolved once every page is written; "3.5" in a table
        return token('<a href="%s">\x01WHERE:%s:%s\x02</a>'
                     % (ref(label), "p" if prose else "t", label))

    def pagerefs(self, t):
        # "page~\pageref{x}" names a page of the PDF; here it names the section
        def sub(m):
            lead, l1, l2, close = m.group(1), m.group(2), m.group(3), m.group(4)
            close, paren = close or "", lead.strip() == "("
            before = t[max(0, m.start() - 80):m.start()]
            said = "\\ref{%s}" % l1 in before
            if l1.split(":")[0] in ("ch", "app"):   # "chapter~W5 (page~...)"
                said = said or re.search(r"(?i)(chapter|appendix)~%s\W*$" % re.escape(
                    self.num(l1)[0]), before) is not None
            if said and (lead.strip() == "," or paren and close):
                return "" if paren else close   # the \ref before it says where
            lead = {"on ": "in ", "On ": "In "}.get(lead, lead)
            out = lead + self.where(l1)
            if l2: out += " and " + self.where(l2)
            return out + close
        t = re.sub(r"(,\s*|\s*\(|\b[Oo]n |\bfrom |\bof |)"
                   r"(?:p\.|pages?)~\\pageref\{([^}]*)\}"
                   r"(?:\s+and~\\pageref\{([^}]*)\})?(\))?", sub, t)
        return replace_cmd(t, "pageref", 1, lambda l: self.where(l, False))

    def file_code(self, a):
        """\\file{...}: the characters as typed, never a typographic dash."""
        def untex(x):
            for k, v in (("\\textbackslash{}", "\\"), ("\\textasciitilde{}", "~"),
                         ("\\~{}", "~"), ("\\-", ""), ("{}", "")):
                x = x.replace(k, v)
            x = re.sub(r"\\([_#%&${}])", r"\1", x)
            if "\\" in x: sys.exit("nw2html: a command in \\file{%s}" % a)
            return html.escape(x)
        parts = re.split(r"(\\emph\{[^{}]*\})", a)
        return token("<code>%s</code>" % "".join(
            "<em>%s</em>" % untex(x[6:-1]) if x.startswith("\\emph{")
            else untex(x) for x in parts))

    def text(self, t):
        t = re.sub(r"\\S(?![a-zA-Z])\s*", lambda m: token("&#xA7;"), t)
        t = replace_cmd(t, "label", 1,
                        lambda l: token('<span id="%s"></span>' % l))
        t = self.pagerefs(t)
        t = replace_cmd(t, "eqref", 1,
                        lambda l: self.link(l, "(%s)" % self.num(l)[0]))
        t = replace_cmd(t, "ref", 1, lambda l: self.link(l, self.num(l)[0]))
        t = replace_cmd(t, "solref", 1, lambda l: "(Solution: "
                        + self.where(l) + ".)")
        t = replace_cmd(t, "cite", 1, lambda ks: "[" + ", ".join(
            self.link("cite-" + k.strip(), self.cites.get(k.strip(), "?"))
            for k in ks.split(",")) + "]", opt=True)
        t = replace_cmd(t, "index", 1, lambda a: "")
        for name in ("markboth", "addcontentsline", "addtocontents"):
            t = replace_cmd(t, name, {"markboth": 2, "addcontentsline": 3,
                                      "addtocontents": 2}[name], lambda *a: "")
        for name in ("file", "cid"):
            t = replace_cmd(t, name, 1, self.file_code)
        t = t.replace("\\qed", token("&#x220E;"))
        t = re.sub(r"\\(noindent|centering|medskip|bigskip|smallskip|"
                   r"phantomsection|cleardoublepage|clearpage|newpage|"
                   r"makeatletter|makeatother|nocite\{[^}]*\}|"
                   r"bibliographystyle\{[^}]*\}|bibliography\{[^}]*\}|"
                   r"printindex|nowebchunks|nowebindex|backmatter|"
                   r"frontmatter|mainmatter|appendix|workshopchaptersresume|"
                   r"workshopchapters|workshopsubchapter\{[a-z]\}|"
                   r"renewcommand\{\\indexname\}\{[^}]*\})(?![a-zA-Z])", "", t)
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
                # the figure file has no .aux: its references are numbers
                body = replace_cmd(body, "eqref", 1,
                                   lambda l: "(%s)" % self.num(l)[0])
                body = replace_cmd(body, "ref", 1, lambda l: self.num(l)[0])
                self.figures.append((body.strip(), number,
                                     self.plain_caption(caption)))
                k = len(self.figures)
                img = ('<figure class="fig"%s><div class="figimg">\x01FIG:%d\x02'
                       '</div><a class="figfull" href="fig/fig-%d.svg" '
                       'aria-label="Figure %s at full size">full size</a>'
                       '<figcaption id="figcap-%d">'
                       % (' id="%s"' % label if label else "", k, k, number, k))
                # each tag a paragraph of its own, so the caption is a <p>
                # inside the <figcaption> and no <p> holds the <figure>
                return ("\n\n" + token(img) + "\n\n\\textbf{%s %s.} %s\n\n"
                        % (name, number, caption) + token("</figcaption></figure>")
                        + "\n\n")
            return ("\n\n" + anchor + "\\textbf{%s %s.} %s\n\n" % (
                name, number, caption) + body.replace("\\centering", "")
                + "\n\n")
        return re.sub(r"\\begin\{(figure|table)\}(?:\[[^\]]*\])?(.*?)"
                      r"\\end\{\1\}", fig, t, flags=re.S)

    def plain_caption(self, cap):
        """A caption as plain text, for the title of a figure's own file."""
        import unicodedata
        cap = replace_cmd(cap, "val", 1, lambda k: self.values.get(k, ""))
        cap = replace_cmd(cap, "eqref", 1, lambda l: "(%s)" % self.num(l)[0])
        cap = replace_cmd(cap, "ref", 1, lambda l: self.num(l)[0])
        cap = re.sub(r"ROPEPH(\d+)X", lambda m: html.unescape(
            re.sub(r"<[^>]*>", "", PH[int(m.group(1))])), cap)
        def symbol(m):
            name = m.group(1)
            signs = {"ell": "\u2113", "approx": "\u2248", "le": "\u2264",
                     "leq": "\u2264", "ge": "\u2265", "geq": "\u2265",
                     "times": "\u00d7", "cdot": "\u00b7", "ldots": "\u2026",
                     "dots": "\u2026", "infty": "\u221e", "pm": "\u00b1",
                     "lambda": "\u03bb", "Lambda": "\u039b"}
            if name in signs: return signs[name]
            if name in ("cos", "sin", "ln", "log", "exp", "max", "min", "arg"):
                return name + " "
            case = "CAPITAL" if name[0].isupper() else "SMALL"
            try: return unicodedata.lookup("GREEK %s LETTER %s" % (case, name.upper()))
            except KeyError: return ""
        cap = re.sub(r"ROPEIDX\d+Q", "", cap)
        cap = re.sub(r"\\[,;:! ]", " ", cap)
        cap = re.sub(r"\\([a-zA-Z]+)\*?", symbol, cap)
        cap = re.sub(r"[{}$\\]", "", cap)
        return re.sub(r"\s+", " ", cap.replace("~", " ").replace("--", "\u2013")
                      ).strip()

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
    # a figure's place, once compile_figures has made its SVG
    return re.sub(r"\x01FIG:(\d+)\x02",
                  lambda m: FIGS.get(int(m.group(1)), m.group(0)), h)

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

# The HTML edition / The converter / Figures as SVG with their text
# ---- figures: SVG with their text, from mutool
import xml.etree.ElementTree as ET
SVG, XLINK = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
XMLSPACE = "{http://www.w3.org/XML/1998/namespace}space"
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)
FIGS = {}                # figure number k -> its inline SVG
FIG_BUDGET = 200 * 1024  # above this, a figure's graphics become an image
# a PDF font: the family of its design size, then fallbacks of its width
FAMILIES = (
    ("LMMono", "LM Mono", (8, 9, 10, 12),
     "'Latin Modern Mono', 'DejaVu Sans Mono', monospace"),
    ("LMSans", "LM Sans", (8, 9, 10, 12, 17),
     "'Latin Modern Sans', 'DejaVu Sans', sans-serif"),
    ("LM", "LM Roman", (5, 6, 7, 8, 9, 10, 12, 17),
     "'Latin Modern Roman', 'Latin Modern Math', 'CMU Serif', Times, "
     "'Nimbus Roman', 'Liberation Serif', serif"))
# glyphs of the math extension font that glyphtounicode.tex does not name
CMEX = {"summation": "2211", "product": "220F", "integral": "222B",
        "contintegral": "222E", "union": "22C3", "intersection": "22C2"}
GRAPHICS_JS = r"""
// mutool run graphics.js PDF SCALE PAGE OUT.png ...: draw pages without
// their text, which the SVG carries.
var doc = new Document(scriptArgs[0]), s = Number(scriptArgs[1]);
for (var i = 2; i < scriptArgs.length; i += 2) {
  var page = doc.loadPage(Number(scriptArgs[i]) - 1), b = page.bound();
  var pix = new Pixmap(DeviceRGB, [0, 0, Math.ceil((b[2] - b[0]) * s),
                                   Math.ceil((b[3] - b[1]) * s)], false);
  pix.clear(255);
  var draw = new DrawDevice(Identity, pix), dev = {};
  ["fillPath", "strokePath", "clipPath", "clipStrokePath", "popClip",
   "fillShade", "fillImage", "fillImageMask", "clipImageMask", "beginMask",
   "endMask", "beginGroup", "endGroup", "beginTile", "endTile"].forEach(
    function (m) {
      dev[m] = function () { return draw[m].apply(draw, arguments); };
    });
  page.run(dev, Scale(s, s));
  draw.close();
  pix.saveAsPNG(scriptArgs[i + 1]);
}
"""

def q(tag): return "{%s}%s" % (SVG, tag)

def font_key(family, bold, italic):
    style = ("Bold" if bold else "") + ("Italic" if italic else "")
    return family + "-" + (style or "Regular")

def glyph_widths(stext):
    """Each glyph's advance in ems, from mutool's structured text."""
    widths = {}
    for font in ET.parse(stext).iter("font"):
        name, size = font.get("name"), float(font.get("size"))
        fam, _, style = name.partition("-")
        key = font_key(fam, "Bold" in style, "Italic" in style)
        for ch in font.iter("char"):
            x0, y0, x1, y1 = [float(v) for v in ch.get("quad").split()[:4]]
            widths.setdefault((key, ch.get("c")),
                              ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 / size)
    return widths

def text_runs(t):
    """The glyphs of one <text>: (attributes, size, key, y, [(x, char)])."""
    fam, size = t.get("font-family", ""), float(t.get("font-size"))
    math = fam.startswith(("LMMathSymbols", "LMMathExtension"))
    italic = t.get("font-style") == "italic" and not math
    bold = t.get("font-weight") == "bold"
    a = {"font-size": t.get("font-size"), "font-family": "serif"}
    for prefix, name, sizes, rest in FAMILIES:
        if fam.startswith(prefix):
            n = int(re.sub(r"\D", "", fam) or 10)
            a["font-family"] = "'%s %d', %s" % (name, n if n in sizes else 10,
                                                rest)
            break
    if italic: a["font-style"] = "italic"
    if bold: a["font-weight"] = "bold"
    if t.get("fill"): a["fill"] = t.get("fill")
    key = font_key(fam, bold, italic and not fam.startswith("LMMath"))
    dy = 0
    if fam.startswith("LMMathExtension"):
        # TeX's big operators hang below their baseline; Latin Modern
        # Math centres them on the axis, a quarter of an em above it
        dy = 0.75 * size
    elif fam.startswith("LMMathSymbols") and "".join(
            x.text or "" for x in t.iter(q("tspan"))).strip() == "\u221a":
        # so does TeX's radical sign, whose top is at the baseline, where
        # the bar over the radicand starts; a Unicode font sets it on the
        # baseline, 0.76 em high
        dy = 0.76 * size
    return [(a, size, key, float(s.get("y")) + dy,
             list(zip([float(x) for x in s.get("x").split()], s.text or "")))
            for s in t.iter(q("tspan"))]

def join_runs(runs, widths):
    """The runs of one line as tspans, with a space where a word ends."""
    out, prev = [], None
    for a, size, key, y, glyphs in runs:
        xs, chars = [], []
        for x, ch in glyphs:
            if prev:
                px, py, pch, psize, pkey = prev
                end = px + widths.get((pkey, pch), 0.5) * psize
                em = max(size, psize)
                if (abs(y - py) > 0.6 * em or x - end > 0.15 * em
                        or x - end < -0.6 * em):
                    if chars: xs.append(end); chars.append(" ")
                    elif out and not out[-1][3].endswith(" "):
                        out[-1][2].append(end); out[-1][3] += " "
            xs.append(x); chars.append(ch)
            prev = (x, y, ch, size, key)
        if chars: out.append([a, y, xs, "".join(chars)])
    return out

def short(m):
    """A number of a coordinate, to a hundredth of a point."""
    v = ("%.2f" % float(m.group(0))).rstrip("0").rstrip(".")
    v = re.sub(r"^(-?)0\.", r"\1.", v)
    if v in ("-0", ""): v = "0"
    if m.group(0)[0] == "-" and v[0] != "-":
        v = " " + v         # the minus sign was the separator
    return v + (" " if m.string[m.end():m.end() + 1] == "." and "." not in v
                else "")

def figure_svg(src, k, widths):
    """mutool's SVG of figure k, its text in words, its ids its own."""
    root = ET.parse(src).getroot()
    for parent in list(root.iter()):
        groups, cur = [], None
        for c in list(parent):
            if c.tag != q("text"): cur = None; continue
            tr = re.sub(r"-?\d*\.?\d+", lambda m: "%.2f" % float(m.group(0)),
                        c.get("transform", ""))
            if cur and cur[0] == tr: cur[1].append(c)
            else: cur = (tr, [c]); groups.append(cur)
        for _, texts in groups:
            spans = join_runs([r for t in texts for r in text_runs(t)], widths)
            new = ET.Element(q("text"), {"transform": texts[0].get("transform"),
                                         XMLSPACE: "preserve"})
            for a, y, xs, s in spans:
                if "\ufffd" in s:
                    sys.exit("nw2html: figure %d has a glyph without Unicode "
                             "in '%s'" % (k, s))
                sp = ET.SubElement(new, q("tspan"), a)
                sp.set("x", " ".join("%.2f" % x for x in xs))
                sp.set("y", "%.2f" % y)
                sp.text = s
            parent.insert(list(parent).index(texts[0]), new)
            for t in texts: parent.remove(t)
    for e in root.iter():
        for name, v in list(e.attrib.items()):
            if name == "id": e.set(name, "fig%d-%s" % (k, v))
            elif "url(#" in v:
                e.set(name, v.replace("url(#", "url(#fig%d-" % k))
            elif name in ("d", "transform", "x", "y", "width", "height",
                          "stroke-width", "font-size", "stroke-dasharray"):
                e.set(name, re.sub(r"-?\d*\.\d+", short, v))
            if (name, v) in (("stroke-linecap", "butt"),
                             ("stroke-linejoin", "miter")):
                del e.attrib[name]
    return root

def text_only(root, png):
    """The figure's graphics replaced by an image of them under its text."""
    for parent in list(root.iter()):
        if parent.tag == q("clipPath"): continue
        for c in list(parent):
            if c.tag in (q("path"), q("image")): parent.remove(c)
    x, y, w, h = root.get("viewBox").split()
    root.insert(0, ET.Element(q("image"), {"x": x, "y": y, "width": w,
        "height": h, "preserveAspectRatio": "none", "href": png}))

# The HTML edition / The converter / The three tools
def compile_figures(figures, preamble, macros_tex, figdir, outdir):
    os.makedirs(figdir, exist_ok=True)
    doc = [preamble, macros_tex,
           "\\input glyphtounicode \\pdfgentounicode=1\n"]
    for name, code in sorted(CMEX.items()):
        for size in ("text", "display"):
            doc.append("\\pdfglyphtounicode{%s%s}{%s}\n" % (name, size, code))
    doc += ["\\begin{document}\n", "\\hoffset=-1in \\voffset=-1in\n"]
    for body, _, _ in figures:
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
    def mutool(*args):
        r = subprocess.run(["mutool"] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if r.returncode != 0:
            sys.exit("nw2html: mutool %s failed:\n%s" % (
                args[0], r.stdout.decode(errors="replace")))
    raw = os.path.join(figdir, "raw-%d.svg")
    mutool("convert", "-F", "svg", "-O", "text=text", "-o", raw, pdf)
    stext = os.path.join(figdir, "figures.stext")
    mutool("draw", "-F", "stext", "-o", stext, pdf)
    widths = glyph_widths(stext)
    figs = {k: figure_svg(raw % k, k, widths) for k in range(1, pages + 1)}
    heavy = [k for k, r in figs.items()
             if len(ET.tostring(r, encoding="unicode")) > FIG_BUDGET]
    figout = os.path.join(outdir, "fig")
    if os.path.isdir(figout): shutil.rmtree(figout)
    os.makedirs(figout)
    if heavy:
        js = os.path.join(figdir, "graphics.js")
        with open(js, "w") as f: f.write(GRAPHICS_JS)
        mutool("run", js, pdf, "3", *[a for k in heavy for a in (
            str(k), os.path.join(figout, "fig-%d.png" % k))])
        for k in heavy: text_only(figs[k], "fig-%d.png" % k)
    for k, root in figs.items():
        _, number, title = figures[k - 1]
        x, y, w, h = [float(v) for v in root.get("viewBox").split()]
        for a in ("width", "height", "version"): root.attrib.pop(a, None)
        image = root.find(q("image"))
        # the file: twice the size of the page's figure, with a title
        root.set("width", "%d" % round(w * 8 / 3))
        root.set("height", "%d" % round(h * 8 / 3))
        t = ET.Element(q("title"))
        t.text = "Figure %s. %s" % (number, title)
        root.insert(0, t)
        with open(os.path.join(figout, "fig-%d.svg" % k), "w") as f:
            # its fonts, the site's (nw2html: the fonts of the figures)
            f.write('<?xml-stylesheet type="text/css" href="../fonts.css"?>\n'
                    + ET.tostring(root, encoding="unicode") + "\n")
        # on the page: the size of the PDF's figure, named by its caption
        root.remove(t)
        root.set("width", "%d" % round(w * 4 / 3))
        root.set("height", "%d" % round(h * 4 / 3))
        root.set("role", "img")
        root.set("aria-labelledby", "figcap-%d" % k)
        if k in heavy: root.find(q("image")).set("href", "fig/fig-%d.png" % k)
        FIGS[k] = ET.tostring(root, encoding="unicode")
# The HTML edition / The converter / Figures as SVG with their text
def convert():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--aux", required=True)
    ap.add_argument("--bbl", required=True)
    ap.add_argument("--figdir", required=True)
    ap.add_argument("--katex-script", required=True)
    ap.add_argument("--css", required=True)
    ap.add_argument("--js", required=True)
    ap.add_argument("--interactive")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    items, chunks = parse_stream(noweb_stream(a.files))
    num = {c["label"]: k + 1 for k, c in enumerate(chunks)}
    pieces = {}             # a chunk's name -> the labels of its pieces
    for c in chunks: pieces.setdefault(c["name"], []).append(c["label"])
    CHUNKS.update((c["label"], c) for c in chunks)
    whole = "".join(x if kind == "doc" else
                    "\n\n" + token(chunk_html(x, num, pieces)) + "\n\n"
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
    bbl = re.sub(r"\\(?:texttt|url)\{(https?://[^}]*)\}", lambda m: token(
        '<a href="%s">%s</a>' % ((html.escape(m.group(1).replace("\\_", "_")),)
                                 * 2)), bbl)
    bbl = re.sub(r"arXiv:(\d{4}\.\d{4,5})", lambda m: token(
        '<a href="https://arxiv.org/abs/%s">arXiv:%s</a>' % (m.group(1),
                                                              m.group(1))), bbl)
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
            p["html"] += ident_index(num)
    rendered = render_math(MATH, a.katex_script)
    def fill(h):
        h = untoken(h)
        h = re.sub(r"\x01NUM:([^\x02]*)\x02", lambda m: str(num[m.group(1)]), h)
        # a formula and the punctuation after it break as one word
        h = re.sub(r"\x01MATH:(\d+)\x02([.,;:!?)\]]+)", lambda m:
                   '<span class="nowrap">%s%s</span>' % (
                       formula(int(m.group(1))), m.group(2)), h)
        return re.sub(r"\x01MATH:(\d+)\x02", lambda m: formula(int(m.group(1))), h)
    def formula(k):
        # a long formula in the text may be wider than a phone: it
        # scrolls in a box of its own instead of widening the page
        tex, display = MATH[k]
        if display or len(tex) < WIDE_INLINE: return rendered[k]
        return '<span class="wide-math">%s</span>' % rendered[k]
    for p in pages:
        p["html"] = fill(p["html"])
    write_site(a, pages, parts, chunks, num, book)
# The HTML edition / The converter / The site
ROMAN = ["I", "II", "III", "IV", "V"]      # the numbers of the parts

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%(title)s - rope</title>
<link rel="stylesheet" href="katex/katex.min.css">
<link rel="stylesheet" href="rope.css">
<link rel="stylesheet" href="fonts.css">
<script src="rope.js" defer></script>%(scripts)s
</head>
<body>
<a class="skip" href="#main">Skip to the text</a>
<header class="top">
<nav class="pager" aria-label="Previous and next">%(nav)s</nav>
<form class="search" role="search" action="search.html">
<input type="search" name="q" placeholder="Search the book"
 aria-label="Search the book"></form>
</header>
<div class="layout">
<details class="sidebar"><summary>Contents</summary>
<nav aria-label="Contents of the book">%(side)s</nav></details>
<main id="main">
%(body)s
</main>
</div>
<nav class="pager bottom" aria-label="Previous and next">%(nav)s</nav>
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

def ident_index(num):
    def links(labels):
        return ", ".join('<a href="%s">%d</a>' % (ref(l), num[l])
                         for l in labels)
    return '<ul class="index">%s</ul>' % "\n".join(
        '<li><code>%s</code>: defined in %s%s.</li>' % (
            html.escape(name), links(defs),
            "; used in " + links(uses) if uses else ", not used elsewhere")
        for name, defs, uses in sorted(IDENTS, key=lambda e: e[0].lower()))

def order_headings(h):
    """Headings one level at most below the one before; ids without
    placeholders."""
    level, seen = [1], set()
    def unique(i):
        i = re.sub(r"ropeph\d+x-?", "", i) or "section"
        k, base = 1, i
        while i in seen: k += 1; i = "%s-%d" % (base, k)
        seen.add(i)
        return i
    def fix(m):
        n, attrs, body = int(m.group(1)), m.group(2), m.group(3)
        para = n == 5
        n = min(n, level[0] + 1)
        level[0] = n
        attrs = re.sub(r'\sid="([^"]*)"', lambda i: ' id="%s"'
                       % unique(i.group(1)), attrs)
        if para: attrs += ' class="para"'
        return "<h%d%s>%s</h%d>" % (n, attrs, body, n)
    return re.sub(r"<h([2-6])((?:\s[^>]*)?)>(.*?)</h\1>", fix, h, flags=re.S)

def strip_mathml(h):
    return re.sub(r'<span class="katex-mathml"><math.*?</math></span>', "",
                  h, flags=re.S)

def locations(p, labels):
    """The section (or number) every id of page p stands in."""
    where = {}
    current = (p["label"][0].lower() + p["label"][1:] if p["label"]
               else p["title"])
    for m in re.finditer(r'<h[1-6]([^>]*)>(.*?)</h[1-6]>|\sid="([^"]+)"',
                         p["html"], flags=re.S):
        if m.group(3):
            where[m.group(3)] = current
            continue
        text = re.sub(r"<[^>]*>", "", strip_mathml(m.group(2))).strip()
        num = re.match(r"([A-Z]?W?\d+[a-z]?(?:\.\d+)+|[A-Z](?:\.\d+)+)\s",
                       text)
        if num: current = "section " + num.group(1)
        for i in re.findall(r'\sid="([^"]+)"', m.group(1) + m.group(2)):
            where[i] = current
    return where

def where_text(label, kind, at, page, labels):
    num = labels.get(label, ("??",))[0]
    prefix = label.split(":")[0]
    words = {"eq": "equation (%s)", "fig": "figure %s", "tab": "table %s",
             "ex": "exercise %s"}
    if prefix in words: text = words[prefix] % num
    elif prefix in ("ch", "app"):
        text = (page["label"][0].lower() + page["label"][1:]
                if page["label"] else page["title"])
    else: text = at
    if kind == "t":
        text = re.sub(r"^section ", "\u00a7", text)
    return text.replace(" ", "\u00a0", 1) if kind == "p" else text

def sidebar(pages, parts, current, sections):
    starts = {part[0]: k for k, part in enumerate(parts)}
    out = ['<ul class="side">']
    for k, p in enumerate(pages):
        if k in starts:
            out.append('<li class="part">Part %s: %s</li>'
                       % (ROMAN[starts[k]], html.escape(parts[starts[k]][1])))
        here = p["file"] == current
        out.append('<li><a href="%s"%s>%s%s</a>' % (
            p["file"], ' aria-current="page"' if here else "",
            (p["num"] + " ") if p.get("num") else "", html.escape(p["title"])))
        if here and sections:
            out.append('<ul>%s</ul>' % "".join(
                '<li><a href="#%s">%s</a></li>' % (i, t) for i, t in sections))
        out.append("</li>")
    out.append("</ul>")
    return "".join(out)

# The HTML edition / The converter / The search index
class TextOf(html.parser.HTMLParser):
    """The sections of a page: (id, title, text), formulas left out."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections = [["", "", []]]
        self.skip = 0           # depth inside a formula or a script
        self.title = None       # the text of the heading being read
    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        if self.skip or "katex" in (d.get("class") or "").split() \
           or tag in ("script", "style"):
            self.skip += tag not in ("br", "img", "input", "meta", "link")
            return
        if re.fullmatch(r"h[1-6]", tag) and d.get("id"):
            self.sections.append([d["id"], "", []])
            self.title = []
    def handle_endtag(self, tag):
        if self.skip:
            self.skip -= 1
            return
        if re.fullmatch(r"h[1-6]", tag) and self.title is not None:
            self.sections[-1][1] = " ".join("".join(self.title).split())
            self.title = None
    def handle_data(self, data):
        if self.skip: return
        if self.title is not None: self.title.append(data)
        self.sections[-1][2].append(data)

def write_search_index(path, pages):
    entries = []
    for p in pages:
        t = TextOf()
        t.feed(p["html"])
        for sid, title, text in t.sections:
            text = " ".join("".join(text).split())
            if text: entries.append([p["file"], sid, title or p["title"], text])
    titles = {p["file"]: ((p["label"] + ". ") if p.get("label") else "")
              + p["title"] for p in pages}
    with open(path, "w") as f:
        f.write("// search-index.js: written by nw2html.py\n"
                "window.ROPE_PAGES = %s;\nwindow.ROPE_SEARCH = %s;\n"
                % (json.dumps(titles), json.dumps(entries)))

# The HTML edition / The converter / The fonts of the figures
LMFONTS = "/usr/share/texmf/fonts/opentype/public"
def write_fonts(out, pages):
    used = set()
    for p in pages:
        used.update(re.findall(r"font-family=\"'(L[^']+)'", p["html"]))
    faces = []
    for fam in sorted(used):
        m = re.fullmatch(r"LM (Roman|Mono|Sans) (\d+)", fam)
        if not m: sys.exit("nw2html: a figure asks for the font " + fam)
        stem = "lm%s%s" % (m.group(1).lower(), m.group(2))
        for style, weight, name in (("normal", "normal", "regular"),
                                    ("italic", "normal", "italic"),
                                    ("normal", "bold", "bold")):
            for n in (name, "oblique" if name == "italic" else name):
                f = "%s-%s.otf" % (stem, n)
                if os.path.exists(os.path.join(LMFONTS, "lm", f)):
                    faces.append((fam, style, weight, "lm/" + f))
                    break
    faces.append(("Latin Modern Math", "normal", "normal",
                  "lm-math/latinmodern-math.otf"))
    os.makedirs(os.path.join(out, "fonts"), exist_ok=True)
    rules = []
    for fam, style, weight, f in faces:
        shutil.copy(os.path.join(LMFONTS, f), os.path.join(out, "fonts"))
        rules.append("@font-face { font-family: '%s'; font-style: %s; "
                     "font-weight: %s; src: url(fonts/%s); }"
                     % (fam, style, weight, os.path.basename(f)))
    with open(os.path.join(out, "fonts.css"), "w") as fh:
        fh.write("/* fonts.css: the Latin Modern faces of the figures "
                 "(nw2html.py) */\n" + "\n".join(rules) + "\n")

# The HTML edition / The converter / The site
def write_site(a, pages, parts, chunks, num, book):
    # where every anchor lives, and the section it stands in
    where, at = {}, {}
    for p in pages:
        head = "<h1>%s%s</h1>\n" % (
            (p["label"] + ". ") if p["label"] else "", html.escape(p["title"]))
        p["html"] = order_headings(head + p["html"])
        for i, w in locations(p, book.labels).items():
            where.setdefault(i, p["file"])
            at.setdefault(i, (w, p))
    toc = ['<h1>rope</h1><p class="subtitle">Position encodings in '
           'transformers, from sinusoids to rotary embeddings to a fused '
           'attention kernel. A literate program in C.</p>',
           '<p>This is the HTML edition, one page per chapter, built from '
           'the same noweb sources as the PDF.</p><h2>Contents</h2>']
    for part in parts:
        where.setdefault(part[2], "index.html")
    starts = {k: part for part in parts for k in [part[0]]}
    toc.append('<ul class="toc">')
    for k, p in enumerate(pages):
        if k in starts:
            pi = parts.index(starts[k])
            toc.append('<li class="part" id="%s">Part %s: %s</li>' % (
                starts[k][2] or "part-%d" % pi, ROMAN[pi],
                html.escape(starts[k][1])))
        # the numbered sections; not a paragraph's run-in heading
        p["sections"] = [
            (re.search(r'\sid="([^"]+)"', a).group(1), strip_mathml(t))
            for a, t in re.findall(r"<h2([^>]*)>(.*?)</h2>", p["html"],
                                   flags=re.S)
            if ' id="' in a and 'class="para"' not in a]
        toc.append('<li class="chapter"><a href="%s">%s%s</a>' % (
            p["file"], (p["label"] + ". ") if p["label"] else "",
            html.escape(p["title"])))
        if p["sections"]:
            toc.append('<ul>%s</ul>' % "".join(
                '<li><a href="%s#%s">%s</a></li>' % (p["file"], i, t)
                for i, t in p["sections"]))
        toc.append("</li>")
    toc.append("</ul>")
    index = {"title": "Contents", "file": "index.html", "html": "\n".join(toc),
             "sections": []}
    search = {"title": "Search", "file": "search.html", "sections": [],
              "html": '<h1>Search</h1><div id="search-results" '
              'aria-live="polite"><p>The search runs in the browser; it '
              'needs JavaScript.</p></div>'}
    def resolve(h):
        h = re.sub(r"\x01WHERE:([pt]):([^\x02]*)\x02", lambda m: where_text(
            m.group(2), m.group(1), *at.get(m.group(2), ("??", pages[0])),
            book.labels), h)
        return re.sub(r"\x01REF:([^\x02]*)\x02", lambda m: (
            "%s#%s" % (where[m.group(1)], m.group(1)) if m.group(1) in where
            else "#unresolved-" + m.group(1)), h)
    seq = [index] + pages
    scripts = ""
    if a.interactive:
        shutil.copy(a.interactive, os.path.join(a.out, "interactive.js"))
        scripts = '\n<script src="interactive.js" defer></script>'
    side_parts = [(s + 1, t, l) for s, t, l in parts]   # seq starts at index
    for k, p in enumerate(seq + [search]):
        p["html"] = resolve(p["html"])
        extra = scripts
        if p is search:
            extra += '\n<script src="search-index.js" defer></script>'
        # the body is resolved above; the contents beside it hold the
        # titles of sections, which may link too
        out = TEMPLATE % {"title": html.escape(p["title"]),
                          "nav": nav(seq[k - 1] if 0 < k < len(seq) else None,
                                     seq[k + 1] if k + 1 < len(seq) else None),
                          "side": resolve(sidebar(seq, side_parts, p["file"],
                                                  p["sections"])),
                          "scripts": extra, "body": p["html"]}
        with open(os.path.join(a.out, p["file"]), "w") as f: f.write(out)
    write_search_index(os.path.join(a.out, "search-index.js"), seq)
    shutil.copy(a.css, os.path.join(a.out, "rope.css"))
    write_fonts(a.out, pages)
    shutil.copy(a.js, os.path.join(a.out, "rope.js"))
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
        len(pages) + 2, len(chunks), len(MATH), len(book.figures), a.out))

# The HTML edition / The converter
if __name__ == "__main__":
    convert()
