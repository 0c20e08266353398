#!/usr/bin/python3
# W7.8 The King James corpus
# kjv-corpus.py: the lines of `bible -f` on stdin, "REF TEXT" one verse a
# line, become chapter 7's corpus file on stdout: a header, then each book
# as a document, "document NAME BYTES" and its verses one a line.
#   kjv-corpus.py SOURCE COMMAND < lines > corpus
import re
import sys

VERSE = re.compile(r"([1-3]?[A-Za-z]+)([0-9]+):([0-9]+) (.+)")
BOOKS = 66


def main():
    if len(sys.argv) != 3:
        print("usage: kjv-corpus.py SOURCE COMMAND < lines > corpus",
              file=sys.stderr)
        sys.exit(2)
    books = []
    for n, raw in enumerate(sys.stdin.buffer, 1):
        try:
            m = VERSE.fullmatch(raw.decode("ascii").rstrip("\n"))
        except UnicodeDecodeError:
            m = None
        if m is None:
            sys.exit("kjv-corpus.py: line %d is not 'REF TEXT' in ASCII" % n)
        if not books or books[-1][0] != m.group(1):
            if any(b[0] == m.group(1) for b in books):
                sys.exit("kjv-corpus.py: line %d: %s again" % (n, m.group(1)))
            books.append((m.group(1), []))
        books[-1][1].append(m.group(4))
    if len(books) != BOOKS:
        sys.exit("kjv-corpus.py: %d books, not %d" % (len(books), BOOKS))
    out = ["rope-corpus 1\n", "source %s\n" % sys.argv[1],
           "command %s\n" % sys.argv[2], "documents %d\n" % len(books)]
    for name, verses in books:
        text = "".join(v + "\n" for v in verses)
        out += ["document %s %d\n" % (name, len(text)), text]
    sys.stdout.buffer.write("".join(out).encode("ascii"))


if __name__ == "__main__":
    main()
