# W8d.3 The tokenizer
"""minimind_tokenizer.py: MiniMind's byte-level BPE, text to ids and back.

    python3 python/minimind_tokenizer.py --tokenizer tokenizer.json \\
        encode "text"
    python3 python/minimind_tokenizer.py --tokenizer tokenizer.json \\
        decode 1 2 3

Reads the tokenizer.json of a MiniMind checkout (model/tokenizer.json)
and implements what it names: its added tokens, its pre-tokenizer
(ByteLevel, with or without GPT-2's split), its merges by rank and its
ByteLevel decoder.  The standard library only.  The book's chapter
"Workshop: MiniMind's weights, tokens and its own code" explains this
file.
"""
import argparse
import json
import re
import sys
import unicodedata


def byte_to_unicode():
    """GPT-2's map of the 256 bytes onto printable characters: the
    printable bytes stand for themselves, the other 68 take the
    characters from U+0100 on, in byte order."""
    keep = (list(range(ord("!"), ord("~") + 1))
            + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1)))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


WHITE_SPACE = frozenset([0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F,
                         0x205F, 0x3000] + list(range(0x09, 0x0D + 1))
                        + list(range(0x2000, 0x200A + 1)))
CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")


def kind(ch):
    """'s' white space, 'L' letter, 'N' number, 'P' anything else."""
    if ord(ch) in WHITE_SPACE:
        return "s"
    first = unicodedata.category(ch)[0]
    return first if first in "LN" else "P"


def gpt2_split(text):
    """The pieces of GPT-2's pattern
    's|'t|'re|'ve|'m|'ll|'d| ?L+| ?N+| ?[^sLN]+|s+(?!S)|s+
    (L letters, N numbers, s white space, S anything else), taken
    left to right as the regular expression's first match takes them."""
    pieces, i, n = [], 0, len(text)
    kinds = [kind(ch) for ch in text]

    def run(j, k):        # the end of the run of kind k from j
        while j < n and kinds[j] == k:
            j += 1
        return j
    while i < n:
        if text[i] == "'":
            tail = next((t for t in CONTRACTIONS
                         if text.startswith(t, i + 1)), None)
            if tail:
                pieces.append(text[i:i + 1 + len(tail)])
                i += 1 + len(tail)
                continue
        k = kinds[i]
        if text[i] == " " and i + 1 < n and kinds[i + 1] != "s":
            j = run(i + 1, kinds[i + 1])            # ' ?L+', ' ?N+', ...
        elif k != "s":
            j = run(i, k)
        else:
            j = run(i, "s")
            if j < n and j - i > 1:                  # 's+(?!S)'
                j -= 1
        pieces.append(text[i:j])
        i = j
    return pieces


class Tokenizer:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        model = spec["model"]
        if model.get("type") != "BPE":
            raise ValueError("%s: model type %s; only BPE is read"
                             % (path, model.get("type")))
        self.vocab = dict(model["vocab"])
        self.rank = {}
        for r, m in enumerate(model["merges"]):
            a, b = m.split(" ") if isinstance(m, str) else m
            self.rank[(a, b)] = r
        self.whole = bool(model.get("ignore_merges"))
        self.added = {t["content"]: t["id"] for t in spec["added_tokens"]}
        self.special = {t["id"] for t in spec["added_tokens"]
                        if t.get("special")}
        self.token = {i: s for s, i in self.vocab.items()}
        self.token.update({i: s for s, i in self.added.items()})
        self.byte = byte_to_unicode()
        self.unbyte = {ch: b for b, ch in self.byte.items()}
        self.normalize = normalizer(path, spec.get("normalizer"))
        self.prefix, self.split = pre_tokenizer(path,
                                                spec.get("pre_tokenizer"))
        longest = sorted(self.added, key=len, reverse=True)
        self.added_re = re.compile("|".join(map(re.escape, longest))) \
            if longest else None
        self.cache = {}

    def encode(self, text):
        """ids of text: added tokens first, then each stretch between
        them normalised, split and merged."""
        ids, at = [], 0
        found = self.added_re.finditer(text) if self.added_re else ()
        for m in found:
            ids += self.encode_ordinary(text[at:m.start()])
            ids.append(self.added[m.group()])
            at = m.end()
        return ids + self.encode_ordinary(text[at:])

    def encode_ordinary(self, text):
        if not text:
            return []
        text = self.normalize(text)
        if self.prefix and not text.startswith(" "):
            text = " " + text
        ids = []
        for piece in (gpt2_split(text) if self.split else [text]):
            chars = "".join(self.byte[b] for b in piece.encode("utf-8"))
            if chars not in self.cache:
                self.cache[chars] = [self.vocab[s] for s in
                                     self.merge(chars)]
            ids += self.cache[chars]
        return ids

    def merge(self, word):
        """BPE: merge the adjacent pair of lowest rank, everywhere it
        occurs left to right, until no pair of the word has a rank."""
        if self.whole and word in self.vocab:
            return [word]
        symbols = list(word)
        while len(symbols) > 1:
            pairs = set(zip(symbols, symbols[1:]))
            best = min(pairs, key=lambda p: self.rank.get(p, len(self.rank)))
            if best not in self.rank:
                break
            merged, i = [], 0
            while i < len(symbols):
                if tuple(symbols[i:i + 2]) == best:
                    merged.append(best[0] + best[1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        return symbols

    def decode(self, ids, skip_special=False):
        """The text of ids: added tokens as written, the others' characters
        mapped back to bytes; bytes that are not UTF-8 become U+FFFD."""
        out = bytearray()
        for i in ids:
            if i not in self.token:
                raise ValueError("id %d is not in the vocabulary" % i)
            s = self.token[i]
            if i in self.special and skip_special:
                continue
            if s in self.added:
                out += s.encode("utf-8")
            else:
                out += bytes(self.unbyte[ch] for ch in s)
        return out.decode("utf-8", errors="replace")


def normalizer(path, spec):
    if spec is None:
        return lambda text: text
    if spec.get("type") in ("NFC", "NFD", "NFKC", "NFKD"):
        return lambda text: unicodedata.normalize(spec["type"], text)
    raise ValueError("%s: normalizer %s is not implemented"
                     % (path, spec.get("type")))


def pre_tokenizer(path, spec):
    """(add a space before the text?, split GPT-2's way?)"""
    if spec is None:
        return False, False
    if spec.get("type") != "ByteLevel":
        raise ValueError("%s: pre_tokenizer %s is not implemented; this "
                         "reader knows ByteLevel" % (path, spec.get("type")))
    return bool(spec.get("add_prefix_space")), spec.get("use_regex", True)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="minimind_tokenizer",
        description="MiniMind's tokenizer.json: encode text, decode ids.")
    ap.add_argument("--tokenizer", required=True,
                    help="tokenizer.json (MiniMind: model/tokenizer.json)")
    ap.add_argument("--skip-special", action="store_true",
                    help="decode: leave special tokens out")
    ap.add_argument("command", choices=("encode", "decode"))
    ap.add_argument("args", nargs="+", help="the text, or the ids")
    a = ap.parse_args(argv)
    try:
        tok = Tokenizer(a.tokenizer)
        if a.command == "encode":
            print(" ".join(map(str, tok.encode(" ".join(a.args)))))
        else:
            ids = [int(w) for arg in a.args for w in arg.split()]
            sys.stdout.write(tok.decode(ids, a.skip_special) + "\n")
    except (OSError, ValueError, KeyError) as e:
        print("minimind_tokenizer: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
