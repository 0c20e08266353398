# W9.3 The binding's tests
"""tests.py: the tests of the Python binding (the book's chapter
"Workshop: the library from Python, beside MiniMind").

Run by make test as: ROPE_LIB=build/librope.so ROPE_CLI=build/rope
/usr/bin/python3 -m unittest python/tests.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rope  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
CLI = os.environ.get("ROPE_CLI", os.path.join(ROOT, "build", "rope"))
GOLDEN = os.path.join(ROOT, "tests", "golden", "minimind")
MINIMIND_YARN = {"beta_fast": 32, "beta_slow": 1, "factor": 16,
                 "original_max_position_embeddings": 2048,
                 "attention_factor": 1.0, "type": "yarn"}

def golden(name):
    return np.loadtxt(os.path.join(GOLDEN, name), comments="#",
                      ndmin=2).astype(np.float32)


def ulps(a, b):
    def ordered(x):
        i = np.ascontiguousarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(2**31) - i, i)
    return int(np.max(np.abs(ordered(a) - ordered(b)))) if np.size(a) else 0


def cli(*args):
    return subprocess.run([CLI] + [str(a) for a in args], check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def cli_table(*args):
    return np.loadtxt(cli("freqs", *args).splitlines(), ndmin=2,
                      dtype=np.float64).astype(np.float32)


def uniform(rng, *shape):
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)
def reference_attention(q, k, v, cos, sin):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    n, nk, h, hk, d = q.shape[1], k.shape[1], q.shape[2], k.shape[2], q.shape[3]

    def rotate(x, rows):
        c, s = cos[rows, None, :], sin[rows, None, :]
        half = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
        return x * c + half * s
    qr = rotate(q[0], np.arange(nk - n, nk))
    kr = np.repeat(rotate(k[0], np.arange(nk)), h // hk, axis=1)
    vr = np.repeat(v[0], h // hk, axis=1)
    s = np.einsum("ihd,jhd->hij", qr, kr) / np.sqrt(d)
    s[:, np.arange(n)[:, None] + nk - n < np.arange(nk)[None, :]] = -np.inf
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return np.einsum("hij,jhd->ihd", w, vr)[None]


class TestHeader(unittest.TestCase):
    def c_fields(self, name, header):
        import re
        with open(os.path.join(ROOT, "generated", "lib", header)) as f:
            text = f.read()
        body = text.split("typedef struct %s {" % name)[1]
        body = body.split("} %s;" % name)[0]
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        names = []
        for decl in body.split(";"):
            if not decl.strip():
                continue
            m = re.search(r"\(\*\s*(\w+)\)", decl)
            if m:
                names.append(m.group(1))
                continue
            for piece in decl.split(","):
                names.append(re.findall(r"\w+", piece)[-1])
        return names

    def test_the_structures_follow_the_header(self):
        for cname, header, cls in (
                ("rope_scaling", "scaling.h", rope._Scaling),
                ("rope_attention_params", "attention.h",
                 rope._AttentionParams)):
            self.assertEqual([f[0] for f in cls._fields_],
                             self.c_fields(cname, header), cname)
    def test_the_library_exports_only_its_interface(self):
        import glob
        import re
        lib = os.environ.get("ROPE_LIB") or os.path.join(ROOT, "build",
                                                         "librope.so")
        out = subprocess.run(["nm", "-D", "--defined-only", lib],
                             capture_output=True, text=True, check=True).stdout
        names = [line.split()[-1] for line in out.splitlines() if line.strip()]
        headers = ""
        for path in glob.glob(os.path.join(ROOT, "generated", "lib", "*.h")):
            with open(path) as f:
                headers += f.read()
        self.assertGreater(len(names), 50)
        for name in names:
            self.assertTrue(name.startswith("rope_"), name)
            self.assertIsNone(re.search(r"rope_fma_|rope_triad|_tune|probe|"
                                        r"_peak|env_reload", name), name)
            self.assertRegex(headers, r"\b%s\b" % name)


class TestTables(unittest.TestCase):
    def test_plain_tables_equal_the_cli(self):
        cos, sin = rope.precompute_freqs_cis(64, 32, 1e6)
        self.assertEqual(cos.shape, (32, 64))
        for name, table in (("cos", cos), ("sin", sin)):
            ref = cli_table("--head-dim", 64, "--theta", "1e6", "--end", 32,
                            "--print", name)
            np.testing.assert_array_equal(table, ref)

    def test_yarn_tables_equal_the_cli(self):
        cos, sin = rope.precompute_freqs_cis(64, 2100, 1e6, MINIMIND_YARN)
        flags = ["--head-dim", 64, "--theta", "1e6", "--end", 2100,
                 "--scaling", "yarn", "--yarn-flavor", "minimind",
                 "--factor", 16, "--original-max-position-embeddings", 2048,
                 "--beta-fast", 32, "--beta-slow", 1, "--attention-factor", 1]
        plain, _ = rope.precompute_freqs_cis(64, 2100, 1e6)
        self.assertGreater(ulps(cos, plain), 0)   # the scaling did act
        for name, table in (("cos", cos), ("sin", sin)):
            np.testing.assert_array_equal(table, cli_table(*flags, "--print", name))

    def test_tables_within_one_ulp_of_minimind(self):
        for d, end in ((64, 32), (96, 8)):
            cos, sin = rope.precompute_freqs_cis(d, end, 1e6)
            stem = "rope_default_d%d_end%d_" % (d, end)
            self.assertLessEqual(ulps(cos, golden(stem + "cos.txt")), 1)
            self.assertLessEqual(ulps(sin, golden(stem + "sin.txt")), 1)
        rows = [0, 1, 2, 3, 4, 5, 6, 7, 2047, 2048, 4095, 8191, 32767]
        cos, sin = rope.precompute_freqs_cis(64, 32768, 1e6, MINIMIND_YARN)
        self.assertLessEqual(ulps(cos[rows], golden("rope_yarn_d64_cos.txt")), 1)
        self.assertLessEqual(ulps(sin[rows], golden("rope_yarn_d64_sin.txt")), 1)


class TestApply(unittest.TestCase):
    def test_apply_with_minimind_tables_is_bit_exact(self):
        q = golden("apply_rope_q_in.txt").reshape(1, 6, 8, 96)
        k = golden("apply_rope_k_in.txt").reshape(1, 6, 2, 96)
        cos = golden("rope_default_d96_end8_cos.txt")[:6]
        sin = golden("rope_default_d96_end8_sin.txt")[:6]
        qo, ko = rope.apply_rotary_pos_emb(q, k, cos, sin)
        np.testing.assert_array_equal(
            qo, golden("apply_rope_c1_default_pos0_q_out.txt").reshape(1, 6, 8, 96))
        np.testing.assert_array_equal(
            ko, golden("apply_rope_c1_default_pos0_k_out.txt").reshape(1, 6, 2, 96))
        self.assertFalse(np.array_equal(qo, q))   # the inputs are not returned

    def test_apply_equals_the_cli(self):
        rng = np.random.default_rng(1)
        q, k = uniform(rng, 2, 5, 8, 64), uniform(rng, 2, 5, 4, 64)
        cos, sin = rope.precompute_freqs_cis(64, 3005, 1e4)
        qo, ko = rope.apply_rotary_pos_emb(q, k, cos, sin, start_pos=3000)
        q2, k2 = rope.apply_rotary_pos_emb(q, k, cos[3000:], sin[3000:])
        np.testing.assert_array_equal(qo, q2)
        with tempfile.TemporaryDirectory() as tmp:
            f = {n: os.path.join(tmp, n + ".npy") for n in ("q", "k", "oq", "ok")}
            np.save(f["q"], q)
            np.save(f["k"], k)
            cli("apply", "--q", f["q"], "--k", f["k"], "--theta", "1e4",
                "--start-pos", 3000, "--out-q", f["oq"], "--out-k", f["ok"])
            np.testing.assert_array_equal(qo, np.load(f["oq"]))
            np.testing.assert_array_equal(ko, np.load(f["ok"]))

    def test_repeat_kv_copies_heads(self):
        x = uniform(np.random.default_rng(2), 2, 3, 4, 8)
        np.testing.assert_array_equal(rope.repeat_kv(x, 2), np.repeat(x, 2, axis=2))
        self.assertIs(rope.repeat_kv(x, 1), x)


class TestAttention(unittest.TestCase):
    def problem(self, n, nk, h, hk, d, seed):
        rng = np.random.default_rng(seed)
        return (uniform(rng, 1, n, h, d), uniform(rng, 1, nk, hk, d),
                uniform(rng, 1, nk, hk, d))

    def test_attention_equals_the_cli(self):
        q, k, v = self.problem(5, 12, 8, 2, 64, 3)
        cos, sin = rope.precompute_freqs_cis(64, 12, 1e6)
        out = rope.attention(q, k, v, causal=True, cos=cos, sin=sin, n_threads=2)
        with tempfile.TemporaryDirectory() as tmp:
            f = {n: os.path.join(tmp, n + ".npy") for n in "qkvo"}
            for n, a in (("q", q), ("k", k), ("v", v)):
                np.save(f[n], a)
            cli("attention", "--q", f["q"], "--k", f["k"], "--v", f["v"],
                "--out", f["o"], "--causal", "--theta", "1e6")
            np.testing.assert_array_equal(out, np.load(f["o"]))

    def test_attention_within_the_book_bound(self):
        for n, nk, h, hk, d, rotated in ((16, 16, 8, 4, 96, False),
                                         (1, 300, 8, 2, 64, False),
                                         (1, 300, 8, 2, 64, True)):
            q, k, v = self.problem(n, nk, h, hk, d, nk + hk)
            cos, sin = rope.precompute_freqs_cis(d, nk, 1e6)
            kk = k
            if rotated:
                _, kk = rope.apply_rotary_pos_emb(k, k, cos, sin)
            out = rope.attention(q, kk, v, cos=cos, sin=sin, keys_rotated=rotated)
            ref = reference_attention(q, k, v, cos, sin)
            self.assertLess(np.max(np.abs(out - ref)), 2e-5)


class TestErrors(unittest.TestCase):
    def test_shapes_are_refused_with_value_error(self):
        rng = np.random.default_rng(4)
        q, k = uniform(rng, 1, 4, 8, 64), uniform(rng, 1, 4, 2, 64)
        v = uniform(rng, 1, 4, 2, 64)
        cos, sin = rope.precompute_freqs_cis(64, 4)
        bad = [lambda: rope.apply_rotary_pos_emb(q.astype(np.float64), k, cos, sin),
               lambda: rope.apply_rotary_pos_emb(q[0], k, cos, sin),
               lambda: rope.apply_rotary_pos_emb(q[..., :63], k[..., :63],
                                                 cos[:, :63], sin[:, :63]),
               lambda: rope.apply_rotary_pos_emb(q, k, cos[:3], sin[:3]),
               lambda: rope.apply_rotary_pos_emb(q, k, cos, sin, start_pos=1),
               lambda: rope.precompute_freqs_cis(63, 4),
               lambda: rope.repeat_kv(k, 0),
               lambda: rope.attention(q, uniform(rng, 1, 4, 3, 64),
                                      uniform(rng, 1, 4, 3, 64)),
               lambda: rope.attention(q, k[:, :3], v[:, :3]),
               lambda: rope.attention(q, k, v, cos=cos),
               lambda: rope.attention(q, k, v, cos=cos[:3], sin=sin[:3]),
               lambda: rope.attention(q, k, v[..., :32]),
               lambda: rope.precompute_freqs_cis(64, 4, 1e6, {"fator": 16})]
        for i, call in enumerate(bad):
            with self.subTest(case=i):
                self.assertRaises(ValueError, call)

    def test_c_error_codes_become_exceptions(self):
        with self.assertRaisesRegex(ValueError, "factor"):
            rope.precompute_freqs_cis(64, 4096, 1e6, {"factor": 0.5})
    def test_zero_is_refused_where_c_reads_it_as_unset(self):
        for key in ("factor", "beta_fast", "beta_slow", "attention_factor",
                    "original_max_position_embeddings"):
            for bad in (0, 0.0, -1):
                with self.subTest(key=key, value=bad):
                    with self.assertRaisesRegex(ValueError, key):
                        rope.precompute_freqs_cis(16, 4096, 1e6, {key: bad})
        plain = rope.precompute_freqs_cis(16, 4096, 1e6, {})
        given = rope.precompute_freqs_cis(16, 4096, 1e6, MINIMIND_YARN)
        self.assertTrue(all(np.array_equal(a, b) for a, b in zip(plain, given)))

    def test_a_nonfinite_output_is_named(self):
        rng = np.random.default_rng(5)
        q, k = uniform(rng, 1, 4, 8, 64), uniform(rng, 1, 4, 2, 64)
        v = uniform(rng, 1, 4, 2, 64)
        q[0, 1, 2, 3] = np.nan
        with self.assertRaisesRegex(ValueError, "not finite.*q holds inf or NaN"):
            rope.attention(q, k, v)
        q[0, 1, 2, 3], v[0, 3, 1, 0] = 0, np.inf
        with self.assertRaisesRegex(ValueError, "not finite.*v holds inf or NaN"):
            rope.attention(q, k, v)
        v[0, 3, 1, 0], q[0, 3], k[0, 2] = 0, 2e19, 2e19
        with self.assertRaisesRegex(ValueError, "scores of q and k overflow"):
            rope.attention(q, k, v)


class TestCrosscheckUsage(unittest.TestCase):
    def test_a_path_without_minimind_is_one_line_and_status_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([sys.executable, os.path.join(ROOT, "python",
                                                             "crosscheck.py"),
                                "--minimind", tmp], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.splitlines()), 1)
        self.assertTrue(r.stderr.startswith("crosscheck: error: "))

    def test_make_crosscheck_takes_a_path_with_a_space(self):
        with tempfile.TemporaryDirectory(prefix="rope mini ") as tmp, \
                tempfile.TemporaryDirectory() as bin_dir:
            os.mkdir(os.path.join(tmp, "model"))
            with open(os.path.join(tmp, "model", "model_minimind.py"), "w") as f:
                f.write("# not MiniMind\n")
            fake = os.path.join(bin_dir, "python")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\n[ "$1" = -c ] && exit 0\n'
                        'exec /usr/bin/python3 "$@"\n')
            os.chmod(fake, 0o755)
            env = {k: v for k, v in os.environ.items()
                   if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
            r = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT,
                                "crosscheck", "MINIMIND=" + tmp,
                                "PYTHON=" + fake], capture_output=True,
                               text=True, env=env)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("not found", r.stderr)
        self.assertIn("crosscheck: error: ", r.stderr)


class TestAppendixExample(unittest.TestCase):
    def test_appendix_example(self):
        # B.4 Running MiniMind beside the C
        import numpy as np
        import rope                       # python/rope.py; loads build/librope.so

        cos, sin = rope.precompute_freqs_cis(96, 32768, rope_base=1e6)
        rng = np.random.default_rng(0)
        q = rng.standard_normal((1, 6, 8, 96)).astype(np.float32)   # [b, s, heads, d]
        k = rng.standard_normal((1, 6, 4, 96)).astype(np.float32)
        v = rng.standard_normal((1, 6, 4, 96)).astype(np.float32)
        q_rot, k_rot = rope.apply_rotary_pos_emb(q, k, cos[:6], sin[:6])
        out = rope.attention(q, k, v, causal=True, cos=cos, sin=sin)
        # the same keys, rotated first as MiniMind's cache holds them
        cached = rope.attention(q, k_rot, v, causal=True, cos=cos, sin=sin,
                                keys_rotated=True)
        assert out.shape == (1, 6, 8, 96) and np.array_equal(out, cached)
        assert rope.repeat_kv(k_rot, 2).shape == (1, 6, 8, 96)


# W9.3 The binding's tests
if __name__ == "__main__":
    unittest.main()
