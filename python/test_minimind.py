# W8d.4 The tests
"""test_minimind.py: the tests of the converter, the NumPy model, the C
model through `rope generate`, and the tokenizer (the book's chapter
"Workshop: MiniMind's weights, tokens and its own code").

Run by make test as: ROPE_LIB=build/librope.so ROPE_CLI=build/rope
/usr/bin/python3 -m unittest python/test_minimind.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import minimind_convert as convert  # noqa: E402
import minimind_numpy  # noqa: E402
import minimind_tokenizer  # noqa: E402

ROOT = os.path.join(HERE, os.pardir)
CLI = os.environ.get("ROPE_CLI", os.path.join(ROOT, "build", "rope"))
try:
    import torch
except ImportError:
    torch = None


DENSE = {"hidden_size": 32, "num_hidden_layers": 1,
         "num_attention_heads": 4, "num_key_value_heads": 2,
         "vocab_size": 96}
MOE = dict(DENSE, use_moe=1, num_experts=4, num_experts_per_tok=2,
           moe_intermediate_size=48)
TWO = dict(DENSE, num_hidden_layers=2)


def random_weights(given, seed):
    """MiniMind's state dict for the configuration given, in the order
    its modules register their parameters, lm_head last and tied."""
    c = convert.configuration(given)
    rng = np.random.default_rng(seed)
    order = sorted(convert.tensor_list(c), key=registration)
    state = {}
    for name, shape in order:
        if len(shape) == 1:               # a norm's weight
            state[name] = rng.uniform(0.5, 1.5, shape)
        else:                             # the embedding, a Linear
            scale = 1.0 if "embed" in name else shape[1] ** -0.5
            state[name] = rng.normal(0.0, scale, shape)
        state[name] = state[name].astype(np.float32)
    state["lm_head.weight"] = state["model.embed_tokens.weight"]
    return c, state


def registration(item):
    """The order of MiniMind's state_dict(): attention before the layer
    norms, gate_proj, down_proj, up_proj, model.norm last."""
    name = item[0]
    rank = ["embed", "q_proj", "k_proj", "v_proj", "o_proj", "q_norm",
            "k_norm", "input_layernorm", "post_attention", "mlp.gate.",
            "gate_proj", "down_proj", "up_proj", "model.norm"]
    parts = name.split(".")
    layer = int(parts[2]) if parts[1] == "layers" else -1
    expert = int(parts[5]) if "experts" in parts else -1
    step = next(i for i, r in enumerate(rank) if r in name)
    return (name == "model.norm.weight", layer, expert, step)


def save_pth(path, state, dtype="float32"):
    torch.save({k: torch.from_numpy(np.array(v)).to(getattr(torch, dtype))
                for k, v in state.items()}, path)


def save_safetensors(path, state, kind="F32", config=None):
    """The safetensors layout: 8 bytes of header length, a JSON header
    of {name: dtype, shape, data_offsets}, the data."""
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name, v in state.items():
        if kind == "F32":
            raw = v.astype("<f4").tobytes()
        elif kind == "F16":
            raw = v.astype("<f2").tobytes()
        elif kind == "BF16":
            raw = (v.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
        else:
            raw = v.astype("<i8").tobytes()
        header[name] = {"dtype": kind, "shape": list(v.shape),
                        "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
    if config is not None:
        with open(os.path.join(os.path.dirname(path), "config.json"),
                  "w") as f:
            json.dump(config, f)


def run_convert(*args):
    p = subprocess.run([sys.executable,
                        os.path.join(HERE, "minimind_convert.py")]
                       + [str(a) for a in args], capture_output=True,
                       text=True)
    return p.returncode, p.stderr


def options(given):
    out = []
    for k, v in given.items():
        out += ["--" + k.replace("_", "-"), str(v)]
    return out


class TestConvert(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def check_file(self, path, c, state, exact=True):
        """The bytes of a converted file, against the spec."""
        with open(path, "rb") as f:
            blob = f.read()
        lines = blob.split(b"\n")
        self.assertEqual(lines[0], b"rope-minimind 1")
        keys = [ln.split(b" ")[0].decode() for ln in lines[1:16]]
        self.assertEqual(keys, [name for name, _ in convert.FIELDS])
        listed = convert.tensor_list(c)
        for (name, shape), line in zip(listed, lines[16:]):
            self.assertEqual(line.decode(), "tensor %s f32 %s" % (
                name, " ".join(map(str, shape))))
        data_line = lines[16 + len(listed)].decode().split()
        self.assertEqual(data_line[0], "data")
        start = int(data_line[1])
        self.assertEqual(start % 4096, 0)
        used = len(b"\n".join(lines[:17 + len(listed)]))
        self.assertEqual(blob[used:start], b"\n" * (start - used))
        floats = sum(int(np.prod(s)) for _, s in listed)
        self.assertEqual(len(blob), start + 4 * floats)
        data = np.frombuffer(blob, "<f4", offset=start)
        at = 0
        for name, shape in listed:
            n = int(np.prod(shape))
            got = data[at:at + n].reshape(shape)
            want = state[name]
            if exact:
                self.assertTrue(np.array_equal(got, want), name)
            at += n

    def test_dense_and_moe_pth(self):
        if torch is None:
            self.skipTest("PyTorch is not installed (Debian: python3-torch)")
        for given in (TWO, MOE):
            c, state = random_weights(given, 1)
            save_pth(self.path("m.pth"), state)
            rc, err = run_convert(self.path("m.pth"), self.path("m.bin"),
                                  *options(given))
            self.assertEqual((rc, err), (0, ""))
            self.check_file(self.path("m.bin"), c, state)

    def test_half_and_bfloat16_are_exact(self):
        given = DENSE
        c, state = random_weights(given, 2)
        for kind, dtype in (("F16", "float16"), ("BF16", "bfloat16")):
            if kind == "F16":
                rounded = {k: v.astype(np.float16).astype(np.float32)
                           for k, v in state.items()}
            else:
                bits = {k: v.view(np.uint32) & 0xFFFF0000
                        for k, v in state.items()}
                rounded = {k: b.view(np.float32) for k, b in bits.items()}
            save_safetensors(self.path("model.safetensors"), rounded, kind)
            rc, err = run_convert(self.path("model.safetensors"),
                                  self.path("s.bin"), *options(given))
            self.assertEqual((rc, err), (0, ""))
            self.check_file(self.path("s.bin"), c, rounded)
            if torch is not None:
                save_pth(self.path("h.pth"), rounded, dtype)
                rc, err = run_convert(self.path("h.pth"), self.path("h.bin"),
                                      *options(given))
                self.assertEqual((rc, err), (0, ""))
                with open(self.path("s.bin"), "rb") as a, \
                        open(self.path("h.bin"), "rb") as b:
                    self.assertEqual(a.read(), b.read())

    def test_safetensors_directory_with_config_json(self):
        c, state = random_weights(MOE, 3)
        del state["lm_head.weight"]      # transformers drops the tied copy
        save_safetensors(self.path("model.safetensors"), state,
                         config=dict(MOE, use_moe=True, hidden_act="silu"))
        rc, err = run_convert(self.dir.name, self.path("d.bin"))
        self.assertEqual((rc, err), (0, ""))
        self.check_file(self.path("d.bin"), c, state)

    def refused(self, checkpoint, given, words):
        """Exit 1, one line naming the problem, nothing written."""
        out = self.path("out.bin")
        with open(out, "wb") as f:
            f.write(b"earlier")
        rc, err = run_convert(checkpoint, out, *options(given))
        self.assertEqual(rc, 1, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("minimind_convert: "), err)
        for w in words:
            self.assertIn(w, err)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"earlier")
        self.assertFalse(os.path.exists(out + ".tmp"))

    def broken_states(self):
        """(what, state, words of the message) for each kind of damage."""
        _, good = random_weights(TWO, 4)
        q = "model.layers.1.self_attn.q_proj.weight"
        out = []
        s = dict(good)
        s["model.layers.1.self_attn.q_proj.weigth"] = s.pop(q)
        out.append(("wrong name", s, ["q_proj.weigth", "unexpected"]))
        s = dict(good)
        del s["model.norm.weight"]
        out.append(("missing", s, ["model.norm.weight", "missing"]))
        s = dict(good, **{"model.layers.2.mlp.up_proj.weight": s[q]})
        out.append(("extra", s, ["model.layers.2.mlp.up_proj.weight"]))
        s = dict(good)
        s[q] = s[q][:, :-2]
        out.append(("shape", s, [q, "[32, 30]", "expected [32, 32]"]))
        s = dict(good)
        s["lm_head.weight"] = s["lm_head.weight"] * 2
        out.append(("untied", s, ["lm_head.weight", "differs"]))
        return out

    def test_refusals_pth(self):
        if torch is None:
            self.skipTest("PyTorch is not installed (Debian: python3-torch)")
        for what, state, words in self.broken_states():
            with self.subTest(what):
                save_pth(self.path("b.pth"), state)
                self.refused(self.path("b.pth"), TWO, words)
        _, state = random_weights(DENSE, 5)
        name = "model.layers.0.input_layernorm.weight"
        ints = {k: torch.from_numpy(v) for k, v in state.items()}
        ints[name] = ints[name].to(torch.int64)
        torch.save(ints, self.path("i.pth"))
        self.refused(self.path("i.pth"), DENSE, [name, "int64"])
        save_pth(self.path("t.pth"), state)
        with open(self.path("t.pth"), "rb") as f:
            blob = f.read()
        with open(self.path("t.pth"), "wb") as f:
            f.write(blob[:len(blob) // 2])
        self.refused(self.path("t.pth"), DENSE, ["t.pth", "truncated"])
        save_pth(self.path("ok.pth"), state)
        self.refused(self.path("ok.pth"), dict(DENSE, hidden_size=48),
                     ["model.embed_tokens.weight", "[96, 32]",
                      "expected [96, 48]"])

    def test_refusals_safetensors(self):
        for what, state, words in self.broken_states():
            with self.subTest(what):
                save_safetensors(self.path("b.safetensors"), state)
                self.refused(self.path("b.safetensors"), TWO, words)
        _, state = random_weights(DENSE, 6)
        save_safetensors(self.path("i.safetensors"), state, "I64")
        self.refused(self.path("i.safetensors"), DENSE, ["int64"])
        save_safetensors(self.path("t.safetensors"), state)
        with open(self.path("t.safetensors"), "rb") as f:
            blob = f.read()
        with open(self.path("t.safetensors"), "wb") as f:
            f.write(blob[:-5])
        self.refused(self.path("t.safetensors"), DENSE,
                     ["truncated", "lm_head.weight"])
        with open(self.path("h.safetensors"), "wb") as f:
            f.write(blob[:100])
        self.refused(self.path("h.safetensors"), DENSE, ["truncated"])
        self.refused(self.path("none.safetensors"), DENSE, ["unreadable"])


def rope_generate(*args, undecided_ok=False):
    """stdout of `rope generate ...`, or None if the CLI lacks it; with
    undecided_ok, the status 1 of a reference with an undecided route
    is accepted too."""
    p = subprocess.run([CLI, "generate"] + [str(a) for a in args],
                       capture_output=True, text=True)
    missing = ("unknown command", "unexpected argument", "not yet")
    if p.returncode in (1, 2) and any(m in p.stderr for m in missing):
        return None
    if undecided_ok and p.returncode == 1 and "undecided" in p.stderr:
        return p.stdout
    if p.returncode != 0:
        raise AssertionError("rope generate %s: exit %d: %s" % (
            " ".join(str(a)[:40] for a in args), p.returncode,
            (p.stderr.strip().splitlines() or [""])[-1]))
    return p.stdout


class TestModel(unittest.TestCase):
    """The C model, the NumPy model and the double reference."""
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def model(self, given, seed):
        c, state = random_weights(given, seed)
        del state["lm_head.weight"]
        src = os.path.join(self.dir.name, "model.safetensors")
        out = os.path.join(self.dir.name, "m%d.bin" % seed)
        save_safetensors(src, state)
        rc, err = run_convert(src, out, *options(given))
        self.assertEqual((rc, err), (0, ""))
        return out

    def logits(self, path, ids, yarn, extra=()):
        """The C model's logits and the reference with its bound."""
        flags = ["--model", path, "--ids", " ".join(map(str, ids))]
        flags += ["--yarn"] if yarn else []
        lfile = os.path.join(self.dir.name, "L.npy")
        rfile = os.path.join(self.dir.name, "R.npy")
        if rope_generate(*flags, "--max-new", 0, "--logits", lfile) is None:
            self.skipTest("%s has no `rope generate --logits` yet" % CLI)
        if rope_generate(*flags, "--max-new", 0, "--reference",
                         rfile) is None:
            self.skipTest("%s has no `rope generate --reference` yet" % CLI)
        return np.load(lfile), np.load(rfile)

    def compare(self, given, seed, n, yarn):
        path = self.model(given, seed)
        rng = np.random.default_rng(seed)
        ids = rng.integers(0, given["vocab_size"], n)
        ours, ref = self.logits(path, ids, yarn)
        numpy_logits = minimind_numpy.MiniMindNumpy(path).forward(ids, yarn)
        self.assertEqual(ours.shape, (n, given["vocab_size"]))
        self.assertEqual(ref.shape, (2, n, given["vocab_size"]))
        exact, bound = ref[0], ref[1]
        self.assertTrue(np.all(bound > 0) and np.all(np.isfinite(bound)))
        self.assertTrue(np.all(np.abs(numpy_logits - exact) <= bound),
                        "NumPy model outside the bound: max ratio %.3g"
                        % np.max(np.abs(numpy_logits - exact) / bound))
        self.assertTrue(np.all(np.abs(ours - numpy_logits) <= 2 * bound),
                        "C and NumPy models further apart than 2 bounds: "
                        "max ratio %.3g"
                        % np.max(np.abs(ours - numpy_logits) / bound))
        return path, ids, numpy_logits, exact, bound

    def test_dense(self):
        for n in (1, 7, 40):
            with self.subTest(n=n):
                self.compare(DENSE, 11, n, False)

    def test_moe(self):
        for n in (1, 7, 40):
            with self.subTest(n=n):
                self.compare(MOE, 12, n, False)
        self.compare(dict(MOE, num_experts_per_tok=1), 13, 9, False)

    def test_yarn_past_2048(self):
        path, ids, _, exact, bound = self.compare(DENSE, 14, 2100, True)
        plain = minimind_numpy.MiniMindNumpy(path).forward(ids, False)
        self.assertFalse(np.all(np.abs(plain - exact) <= bound),
                         "the bound cannot tell YaRN's tables from RoPE's")

    def test_greedy_generation(self):
        path = self.model(DENSE, 15)
        prompt = [3, 1, 4, 1, 5]
        out = rope_generate("--model", path, "--ids", " ".join(
            map(str, prompt)), "--max-new", 16, "--temperature", 0,
                            "--eos", -1)
        if out is None:
            self.skipTest("%s has no `rope generate` yet" % CLI)
        new = [int(w) for w in out.split()][-16:]
        ids = prompt + new
        _, ref = self.logits(path, ids[:-1], False)
        exact, bound = ref[0], ref[1]
        for step, token in enumerate(new):
            row = len(prompt) - 1 + step
            self.assertGreaterEqual(
                exact[row, token] + bound[row, token],
                np.max(exact[row] - bound[row]),
                "step %d: token %d is not a maximum" % (step, token))


THREE = dict(DENSE, num_hidden_layers=3)


class TestBlocks(unittest.TestCase):
    """The C's blocks and head on the NumPy model's hidden states."""
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def file(self, name):
        return os.path.join(self.dir.name, name)

    def run_blocks(self, path, ids, states, chunk, reference=True):
        """C's block outputs and head logits from states; the reference."""
        np.save(self.file("S.npy"), np.stack(states).astype(np.float32))
        flags = ["--model", path, "--ids", " ".join(map(str, ids)),
                 "--max-new", 0, "--states", self.file("S.npy"),
                 "--block-outputs", self.file("O.npy"),
                 "--logits", self.file("Z.npy"), "--prefill-chunk", chunk]
        if reference:
            flags += ["--block-reference", self.file("R")]
        if rope_generate(*flags, undecided_ok=reference) is None:
            self.skipTest("%s has no `rope generate --states` yet" % CLI)
        out = [np.load(self.file("O.npy")), np.load(self.file("Z.npy"))]
        if reference:
            out += [np.load(self.file("R-blocks.npy")),
                    np.load(self.file("R-head.npy"))]
        return out

    def check(self, given, seed, n):
        path = TestModel.model(self, given, seed)
        ids = np.random.default_rng(seed).integers(0, given["vocab_size"], n)
        numpy_model = minimind_numpy.MiniMindNumpy(path)
        states = []
        numpy_logits = numpy_model.forward(ids, False, states)
        L, hidden = given["num_hidden_layers"], given["hidden_size"]
        blocks, head = None, None
        for chunk in (128, 1):
            got = self.run_blocks(path, ids, states, chunk, blocks is None)
            if blocks is None:
                blocks, head = got[2], got[3]
                self.assertEqual(blocks.shape, (2, L, n, hidden))
                self.assertEqual(head.shape, (2, n, given["vocab_size"]))
                for b in (blocks[1], head[1]):
                    self.assertTrue(np.all(b > 0))
                self.assertTrue(np.all(np.isfinite(head[1])))
                if not given.get("use_moe"):     # no route to be undecided
                    self.assertTrue(np.all(np.isfinite(blocks[1])))
            for layer in range(L):
                self.within(states[layer + 1], got[0][layer],
                            blocks[:, layer], "chunk %d, block %d"
                            % (chunk, layer))
            self.within(numpy_logits, got[1], head, "chunk %d, head" % chunk)
        return path, ids, numpy_model, states, blocks

    def within(self, numpy_out, c_out, ref, what):
        """NumPy within the bound of the exact; C within 2 bounds of NumPy;
        the rows of a token whose route is undecided are left out."""
        self.assertEqual(c_out.shape, numpy_out.shape)
        decided = np.all(np.isfinite(ref[1]), axis=-1)
        self.assertTrue(np.any(decided), "%s: no route decided" % what)
        exact, bound = ref[0][decided], ref[1][decided]
        numpy_out, c_out = numpy_out[decided], c_out[decided]
        r = np.max(np.abs(numpy_out - exact) / bound)
        self.assertLessEqual(r, 1, "%s: NumPy outside the bound, ratio %.3g"
                             % (what, r))
        r = np.max(np.abs(c_out - numpy_out.astype(np.float64)) / bound)
        self.assertLessEqual(r, 2, "%s: C and NumPy further apart than 2 "
                             "bounds: ratio %.3g" % (what, r / 2))

    def test_dense_blocks(self):
        for n in (1, 7, 40):
            with self.subTest(n=n):
                self.check(THREE, 21, n)

    def test_moe_blocks(self):
        for n in (1, 7, 40):
            with self.subTest(n=n):
                self.check(dict(MOE, num_hidden_layers=3), 22, n)

    def test_a_position_off_by_one_is_outside(self):
        path, ids, numpy_model, states, blocks = self.check(THREE, 23, 7)
        cos, sin = numpy_model.tables(8, False)
        moved = [0, 1, 2, 3, 4, 5, 7]      # the last token at 7, not 6
        out = numpy_model.block(0, states[0], cos[moved], sin[moved])
        self.assertFalse(np.all(np.abs(out - blocks[0, 0]) <= blocks[1, 0]),
                         "block 0's bound does not see a moved position")
        self.assertTrue(np.all(np.abs(out[:6] - blocks[0, 0, :6])
                               <= blocks[1, 0, :6]),
                        "the positions before the moved one changed")

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def synthetic_tokenizer(path, merges):
    """A tokenizer.json of MiniMind's shape: three special tokens, the
    256 byte characters, and the merges given."""
    table = minimind_tokenizer.byte_to_unicode()
    vocab = {s: i for i, s in enumerate(SPECIAL)}
    for b in range(256):
        vocab[table[b]] = len(vocab)
    for m in merges:
        vocab["".join(m.split(" "))] = len(vocab)
    spec = {"version": "1.0",
            "added_tokens": [{"id": i, "content": s, "special": True}
                             for i, s in enumerate(SPECIAL)],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "trim_offsets": True, "use_regex": True},
            "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(spec, f)


class TestTokenizer(unittest.TestCase):
    MERGES = ["\u0120 t", "h e", "\u0120t he", "b c", "a b", "\u00e4 \u00bd"]

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.file = os.path.join(self.dir.name, "tokenizer.json")
        synthetic_tokenizer(self.file, self.MERGES)
        self.tok = minimind_tokenizer.Tokenizer(self.file)

    def test_split(self):
        split = minimind_tokenizer.gpt2_split
        self.assertEqual(split("Hello world  !\n\nI'm 42x"),
                         ["Hello", " world", " ", " !", "\n", "\n", "I",
                          "'m", " 42", "x"])
        self.assertEqual(split("a \t b  "), ["a", " \t", " b", "  "])
        self.assertEqual(split("\u4f60\u597d, \u4e16\u754c"),
                         ["\u4f60\u597d", ",", " \u4e16\u754c"])
        self.assertEqual(split("x 'quote' ''s"),
                         ["x", " '", "quote", "'", " ''", "s"])

    def test_merges_by_rank(self):
        v = self.tok.vocab
        self.assertEqual(self.tok.encode(" the"), [v["\u0120the"]])
        self.assertEqual(self.tok.encode("abc"), [v["a"], v["bc"]])
        self.assertEqual(self.tok.encode("ab"), [v["ab"]])

    def test_added_tokens(self):
        ids = self.tok.encode("<|im_start|>user<|im_end|>")
        self.assertEqual(ids[0], 1)
        self.assertEqual(ids[-1], 2)
        self.assertEqual(self.tok.decode(ids), "<|im_start|>user<|im_end|>")
        self.assertEqual(self.tok.decode(ids, skip_special=True), "user")

    def test_round_trips(self):
        for text in ["", "Hello, world!", "  two  spaces \n\n\tand tabs ",
                     "\u4f60\u597d\uff0c\u4e16\u754c\u3002",
                     "emoji \U0001F600 and \u00e9\u00e8",
                     "I'll say 'hi' 123.5e-3 <|endoftext|>"]:
            with self.subTest(text=text):
                ids = self.tok.encode(text)
                self.assertEqual(self.tok.decode(ids), text)

    def test_command_line(self):
        tool = [sys.executable, os.path.join(HERE, "minimind_tokenizer.py"),
                "--tokenizer", self.file]
        out = subprocess.run(tool + ["encode", "abc the"], check=True,
                             capture_output=True, text=True).stdout.split()
        self.assertEqual(list(map(int, out)), self.tok.encode("abc the"))
        text = subprocess.run(tool + ["decode"] + out, check=True,
                              capture_output=True, text=True).stdout
        self.assertEqual(text, "abc the\n")


if __name__ == "__main__":
    unittest.main()
