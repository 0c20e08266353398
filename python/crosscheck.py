# W9.4 The crosscheck
"""crosscheck.py: MiniMind's own functions beside the rope book's C.

    python3 python/crosscheck.py --minimind /path/to/minimind [--lib build/librope.so]

Loads precompute_freqs_cis, apply_rotary_pos_emb, repeat_kv and
Attention (with RMSNorm, which Attention uses) from the syntax tree of
MiniMind's model/model_minimind.py, runs them unchanged with PyTorch,
and compares them with the C library through python/rope.py.  The
book's chapter "Workshop: the library from Python, beside MiniMind"
explains this file.  Exit status 0 when every
comparison is within the book's bound, 1 if one is not, 2 for a usage
error.
"""
import argparse
import ast
import datetime
import math
import os
import platform
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rope  # noqa: E402

BOOK_COMMIT = "d65ef2c"

WANTED = ("MiniMindConfig", "RMSNorm", "precompute_freqs_cis",
          "apply_rotary_pos_emb", "repeat_kv", "Attention")


class PretrainedConfig:
    """Stands in for transformers.PretrainedConfig: keeps no state."""

    def __init__(self, **kwargs):
        pass


def load_minimind(path, torch):
    """MiniMind's definitions as a dict, and each one's (first, last) line."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    found = {node.name: node for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.ClassDef))
             and node.name in WANTED}
    missing = [name for name in WANTED if name not in found]
    if missing:
        usage_error("%s defines no %s" % (path, ", ".join(missing)))
    module = ast.Module(body=[found[name] for name in WANTED], type_ignores=[])
    namespace = {"math": math, "torch": torch, "nn": torch.nn,
                 "F": torch.nn.functional, "PretrainedConfig": PretrainedConfig}
    exec(compile(module, path, "exec"), namespace)
    lines = {name: (found[name].lineno, found[name].end_lineno) for name in WANTED}
    return namespace, lines


def usage_error(message):
    print("crosscheck: error: " + message, file=sys.stderr)
    sys.exit(2)
def ulps(a, b):
    def ordered(x):
        i = np.ascontiguousarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(2**31) - i, i)
    return int(np.max(np.abs(ordered(a) - ordered(b))))


ROWS = []


def row(function, config, ours, theirs, bound, key, in_ulps=False, ok=None,
        text=None):
    ours = np.asarray(ours, np.float32)
    theirs = np.asarray(theirs, np.float32)
    diff = float(np.max(np.abs(ours.astype(np.float64) - theirs)))
    u = ulps(ours, theirs)
    if ok is None:
        ok = (u <= bound) if in_ulps else (diff <= bound)
    if text is None:
        text = ("%d ulp" % bound) if in_ulps else (
            "0 (bitwise)" if bound == 0 else "%.2e" % bound)
    ROWS.append(ok)
    print("%-20s %-34s %9.3e %8d  %-11s %-4s %s"
          % (function, config, diff, u, text, key, "pass" if ok else "FAIL"))
    sys.stdout.flush()
def table_bound(ref, theta, d):
    """[3d]: per-entry bound when a frequency may be one ulp apart."""
    f = np.float32(theta) ** (-np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
    f = np.concatenate([f, f]).astype(np.float32)
    t = np.arange(ref.shape[-2], dtype=np.float64)[:, None]
    angle = (t * f).astype(np.float32)
    return (t * np.spacing(f) + np.spacing(np.abs(angle))
            + 2 * np.spacing(np.abs(ref).astype(np.float32)))


def kernel_bound(q, k, v):
    """[5a]: the kernel's 2e-5 scaled to the inputs, for both sides."""
    a = [float(np.max(np.abs(x))) for x in (q, k, v)]
    return 2 * 2e-5 * max(1.0, a[0] * a[1]) * max(1.0, a[2])
DIMS, THETAS, STARTS, KV_HEADS = (64, 96), (1e4, 1e6), (0, 2045, 30000), (4, 2)
BLOCK = 16                                # tokens of a prefill


def base_name(theta):
    return "b1e%d" % round(math.log10(theta))


def run_all(mm, torch):
    for d in DIMS:
        for hk in KV_HEADS:
            compare_repeat_kv(mm, torch, d, hk)
    for d in DIMS:
        for theta in THETAS:
            for yarn in (False, True):
                cfg = mm["MiniMindConfig"](head_dim=d, rope_theta=theta,
                                           inference_rope_scaling=yarn)
                name = "d%d %s %s" % (d, base_name(theta),
                                      "yarn" if yarn else "plain")
                tables = compare_tables(mm, torch, cfg, name)
                for start in STARTS:
                    compare_apply(mm, torch, tables, d, start,
                                  "%s S%d" % (name, start))
                    for hk in KV_HEADS:
                        for mode in ("prefill", "decode"):
                            label = "%s S%d 8/%d %s" % (name, start, hk, mode)
                            compare_layer(mm, torch, tables, cfg, hk, start,
                                          mode, label)
def compare_repeat_kv(mm, torch, d, hk):
    rng = np.random.default_rng(d + hk)
    x = rng.standard_normal((1, BLOCK, hk, d)).astype(np.float32)
    theirs = mm["repeat_kv"](torch.from_numpy(x), 8 // hk).numpy()
    row("repeat_kv", "d%d 8/%d" % (d, hk), rope.repeat_kv(x, 8 // hk), theirs,
        0, "[5r]")
def compare_tables(mm, torch, cfg, name):
    end, theta, d = cfg.max_position_embeddings, cfg.rope_theta, cfg.head_dim
    mc, ms = (t.numpy() for t in mm["precompute_freqs_cis"](
        dim=d, end=end, rope_base=theta, rope_scaling=cfg.rope_scaling))
    cc, cs = rope.precompute_freqs_cis(d, end, theta, cfg.rope_scaling)
    ours, theirs = np.stack([cc, cs]), np.stack([mc, ms])
    if theta == 1e6:
        row("precompute_freqs_cis", name, ours, theirs, 1, "[3a]", in_ulps=True)
    else:
        diff = np.abs(ours.astype(np.float64) - theirs)
        within = diff <= table_bound(theirs, theta, d)
        row("precompute_freqs_cis", name, ours, theirs, None, "[3d]",
            ok=bool(np.all(within)), text="per entry")
    return (mc, ms), (cc, cs)
def compare_apply(mm, torch, tables, d, start, name):
    (mc, ms), (cc, cs) = tables
    rng = np.random.default_rng(start + d)
    rows = slice(start, start + BLOCK)
    theirs, with_theirs, with_ours = [], [], []
    q = rng.uniform(-1, 1, (1, BLOCK, 8, d)).astype(np.float32)
    for hk in KV_HEADS:
        k = rng.uniform(-1, 1, (1, BLOCK, hk, d)).astype(np.float32)
        t = mm["apply_rotary_pos_emb"](
            torch.from_numpy(q), torch.from_numpy(k),
            torch.from_numpy(mc[rows]), torch.from_numpy(ms[rows]))
        theirs += [x.numpy().ravel() for x in t]
        with_theirs += [x.ravel() for x in
                        rope.apply_rotary_pos_emb(q, k, mc[rows], ms[rows])]
        with_ours += [x.ravel() for x in
                      rope.apply_rotary_pos_emb(q, k, cc, cs, start_pos=start)]
    theirs = np.concatenate(theirs)
    row("apply (MiniMind tab)", name + " 8/4,8/2", np.concatenate(with_theirs),
        theirs, 0, "[3b]")
    delta = max(float(np.max(np.abs(cc[rows].astype(np.float64) - mc[rows]))),
                float(np.max(np.abs(cs[rows].astype(np.float64) - ms[rows]))))
    row("apply (own tables)", name + " 8/4,8/2", np.concatenate(with_ours),
        theirs, 2 * delta + 2.0**-22, "[3c]")
def run_minimind_layer(mm, torch, tables, cfg, hk, start, n, seed):
    (mc, ms), _ = tables
    torch.manual_seed(seed)
    layer = mm["Attention"](cfg).eval()
    with torch.no_grad():
        layer.q_norm.weight.uniform_(0.5, 1.5)
        layer.k_norm.weight.uniform_(0.5, 1.5)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, n, cfg.hidden_size)).astype(np.float32)
    cache_k = rng.standard_normal((1, start, hk, cfg.head_dim)).astype(np.float32)
    cache_v = rng.standard_normal((1, start, hk, cfg.head_dim)).astype(np.float32)
    seen = {}
    def keep(name, index=None):
        def hook(module, inputs, output=None):
            t = inputs[0] if index == "input" else output
            seen[name] = t.detach().numpy().copy()
        return hook


    hooks = [layer.q_norm.register_forward_hook(keep("q")),
             layer.k_norm.register_forward_hook(keep("k")),
             layer.v_proj.register_forward_hook(keep("v")),
             layer.o_proj.register_forward_pre_hook(keep("attn", "input"))]
    past = None
    if start > 0:
        _, rk = mm["apply_rotary_pos_emb"](torch.from_numpy(cache_k),
                                           torch.from_numpy(cache_k),
                                           torch.from_numpy(mc[:start]),
                                           torch.from_numpy(ms[:start]))
        past = (rk, torch.from_numpy(cache_v))
        seen["cache_k"] = rk.numpy()
    rows = slice(start, start + n)
    with torch.no_grad():
        out, _ = layer(torch.from_numpy(x), (torch.from_numpy(mc[rows]),
                                             torch.from_numpy(ms[rows])),
                       past_key_value=past, use_cache=True)
    for h in hooks:
        h.remove()
    return layer, x, cache_k, cache_v, seen, out.numpy()
def compare_layer(mm, torch, tables, cfg, hk, start, mode, name):
    (mc, ms), (cc, cs) = tables
    n = BLOCK if mode == "prefill" else 1
    d, h = cfg.head_dim, cfg.num_attention_heads
    cfg.num_key_value_heads = hk
    seed = (d * 7 + hk) * 100003 + start * 2 + n
    layer, x, cache_k, cache_v, seen, out_mm = run_minimind_layer(
        mm, torch, tables, cfg, hk, start, n, seed)
    q, k = seen["q"], seen["k"]
    v = seen["v"].reshape(1, n, hk, d)
    attn_mm = seen["attn"].reshape(1, n, h, d)
    if start == 0:
        att = rope.attention(q, k, v, causal=True, cos=mc, sin=ms)
        a_k = np.abs(k).max()
    else:
        _, kr = rope.apply_rotary_pos_emb(k, k, mc, ms, start_pos=start)
        keys = np.concatenate([seen["cache_k"], kr], axis=1)
        vals = np.concatenate([cache_v, v], axis=1)
        att = rope.attention(q, keys, vals, causal=True, cos=mc, sin=ms,
                             keys_rotated=True)
        a_k = max(np.abs(k).max(), np.abs(cache_k).max())
        v = vals
    row("attention", name, att, attn_mm,
        kernel_bound(q, np.array([a_k]), v), "[5a]")
    compare_forward(layer, tables, cfg, hk, start, n, x, cache_k, cache_v,
                    seen, out_mm, name)
# W9.5 The whole layer
def rms_norm(x, w, eps):
    ms = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return (w * (x / np.sqrt(ms + np.float32(eps)))).astype(np.float32)


def book_layer(W, cfg, hk, start, n, x, cache_k, cache_v, ours):
    d, h = cfg.head_dim, cfg.num_attention_heads
    cc, cs = ours
    q = rms_norm((x[0] @ W["q"].T).reshape(1, n, h, d), W["qn"], cfg.rms_norm_eps)
    k = rms_norm((x[0] @ W["k"].T).reshape(1, n, hk, d), W["kn"], cfg.rms_norm_eps)
    v = (x[0] @ W["v"].T).reshape(1, n, hk, d)
    keys = np.concatenate([cache_k, k], axis=1)
    vals = np.concatenate([cache_v, v], axis=1)
    if n > 1 or start == 0:
        att = rope.attention(q, keys, vals, causal=True, cos=cc, sin=cs)
    else:
        _, kr = rope.apply_rotary_pos_emb(keys, keys, cc, cs)
        att = rope.attention(q, kr, vals, causal=True, cos=cc, sin=cs,
                             keys_rotated=True)
    return q, k, v, att, att.reshape(1, n, h * d) @ W["o"].T
def compare_forward(layer, tables, cfg, hk, start, n, x, cache_k, cache_v,
                    seen, out_mm, name):
    (mc, ms), (cc, cs) = tables
    W = {"q": layer.q_proj.weight, "k": layer.k_proj.weight,
         "v": layer.v_proj.weight, "o": layer.o_proj.weight,
         "qn": layer.q_norm.weight, "kn": layer.k_norm.weight}
    W = {key: w.detach().numpy() for key, w in W.items()}
    q, k, v, att, out = book_layer(W, cfg, hk, start, n, x, cache_k, cache_v,
                                   (cc, cs))
    q_mm, k_mm = seen["q"], seen["k"]
    v_mm = seen["v"].reshape(v.shape)
    rep, c = cfg.num_attention_heads // hk, 1.0 / math.sqrt(cfg.head_dim)
    delta = score_gap((rotated64(q_mm, mc, ms, start),
                       rotated64(np.concatenate([cache_k, k_mm], axis=1), mc, ms, 0)),
                      (rotated64(q, cc, cs, start),
                       rotated64(np.concatenate([cache_k, k], axis=1), cc, cs, 0)),
                      rep, c)
    v_max = max(float(np.max(np.abs(v_mm))),
                float(np.max(np.abs(cache_v))) if start else 0.0)
    a_k = max(float(np.max(np.abs(k_mm))),
              float(np.max(np.abs(cache_k))) if start else 0.0)
    b_att = (kernel_bound(q_mm, np.array([a_k]), np.array([v_max]))
             + math.expm1(2 * delta) * v_max + float(np.max(np.abs(v - v_mm))))
    wo = np.abs(W["o"].astype(np.float64))
    nn_ = W["o"].shape[1]
    gamma = nn_ * 2.0**-24 / (1 - nn_ * 2.0**-24)
    a = np.abs(seen["attn"].astype(np.float64)).reshape(-1, nn_)
    bound = (float(np.max(wo.sum(axis=1))) * b_att
             + 2 * gamma * float(np.max(a @ wo.T)))
    row("Attention.forward", name, out, out_mm, bound, "[Ly]")
def rotated64(x, cos, sin, first):
    d = x.shape[-1]
    t = np.arange(first, first + x.shape[1])
    c = cos[t][None, :, None, :].astype(np.float64)
    s = sin[t][None, :, None, :].astype(np.float64)
    x = x.astype(np.float64)
    return x * c + np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1) * s


def score_gap(path_a, path_b, rep, c):
    def scores(q, k):
        return c * np.einsum("ihd,jhd->hij", q[0], np.repeat(k[0], rep, axis=1))
    return float(np.max(np.abs(scores(*path_a) - scores(*path_b))))
KEYS = [("[3a]", "tables within 1 ulp at base 1e6 (ch. 3, Checking the C code"
                 " against MiniMind)"),
        ("[3d]", "tables, other bases: per entry 2 ulp + t*ulp(f_i) + ulp(angle)"
                 " (Workshop: the library from Python)"),
        ("[3b]", "rotation with MiniMind's tables, bit for bit (ch. 3, same section)"),
        ("[3c]", "rotation with the library's tables, 2*Delta + 2^-22 (ch. 3, How"
                 " accurate the tables are)"),
        ("[5r]", "repeat_kv is a copy, bit for bit"),
        ("[5a]", "attention: 2 * 2e-5 scaled to the inputs (workshop of ch. 5,"
                 " Accuracy and the tests)"),
        ("[Ly]", "Attention.forward (Workshop: the library from Python, The whole"
                 " layer)")]


def commit_of(path):
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "HEAD"],
                              check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minimind", required=True, help="a MiniMind checkout")
    ap.add_argument("--lib", help="librope.so (default: $ROPE_LIB or build/)")
    args = ap.parse_args()
    path = os.path.join(args.minimind, "model", "model_minimind.py")
    if not os.path.isfile(path):
        usage_error("%s not found; --minimind must name a MiniMind checkout" % path)
    try:
        import torch
    except ImportError:
        usage_error("PyTorch is not installed for %s (Debian: python3-torch)"
                    % sys.executable)
    torch.set_num_threads(1)
    rope.load(args.lib)
    mm, lines = load_minimind(path, torch)
    commit = commit_of(args.minimind)
    print("# command: make crosscheck MINIMIND=%s" % args.minimind)
    print("# MiniMind: model/model_minimind.py at commit %s" % commit)
    print("# its definitions: " + ", ".join("%s %d-%d" % (name, a, b)
                                            for name, (a, b) in lines.items()))
    print("# torch %s, numpy %s, Python %s; 1 thread each"
          % (torch.__version__, np.__version__, platform.python_version()))
    print("# date %s UTC; CPU %s" % (datetime.datetime.now(datetime.timezone.utc)
                                     .strftime("%Y-%m-%d %H:%M"), cpu_model()))
    if not commit.startswith(BOOK_COMMIT):
        print("crosscheck: warning: MiniMind is at %s, the book was checked "
              "against %s; its line numbers may differ"
              % (commit[:12], BOOK_COMMIT),
              file=sys.stderr)
        print("# warning: not the book's commit %s" % BOOK_COMMIT)
    print("%-20s %-34s %9s %8s  %-11s %-4s %s" % (
        "function", "configuration", "max|diff|", "max ulps", "bound", "key",
        "result"))
    print("-" * 96)
    run_all(mm, torch)
    failed = ROWS.count(False)
    print("-" * 96)
    print("crosscheck: %d comparisons, %d FAIL" % (len(ROWS), failed))
    for key, text in KEYS:
        print("%s %s" % (key, text))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
