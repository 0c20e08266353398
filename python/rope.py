# W9.2 The module rope.py
"""rope.py: the rope book's C library, called from Python.

Uses ctypes and NumPy only.  The functions carry MiniMind's names and
arguments and work on NumPy float32 arrays in MiniMind's layouts.  The
shared library is build/librope.so (make), or the path in $ROPE_LIB.
The book's chapter "Workshop: the library from Python, beside MiniMind"
explains this file; appendix B shows its use.
"""
import ctypes
import os

import numpy as np

__all__ = ["load", "precompute_freqs_cis", "apply_rotary_pos_emb",
           "repeat_kv", "attention"]

_float_p = ctypes.POINTER(ctypes.c_float)
_double_p = ctypes.POINTER(ctypes.c_double)

ROPE_PRECISION_FLOAT = 0      # rope_precision
ROPE_PAIRING_HALF = 0         # rope_pairing: MiniMind's (i, i + d/2)
ROPE_SCALING_YARN = 3         # rope_scaling_type
ROPE_YARN_MINIMIND = 1        # rope_yarn_flavor


class _Scaling(ctypes.Structure):
    _fields_ = [("rope_type", ctypes.c_int), ("yarn_flavor", ctypes.c_int),
                ("factor", ctypes.c_double),
                ("original_max_position_embeddings", ctypes.c_long),
                ("max_position_embeddings", ctypes.c_long),
                ("seq_len", ctypes.c_long),
                ("beta_fast", ctypes.c_double), ("beta_slow", ctypes.c_double),
                ("attention_factor", ctypes.c_double),
                ("mscale", ctypes.c_double), ("mscale_all_dim", ctypes.c_double),
                ("truncate", ctypes.c_int),
                ("low_freq_factor", ctypes.c_double),
                ("high_freq_factor", ctypes.c_double),
                ("short_factor", _double_p), ("long_factor", _double_p),
                ("n_short_factor", ctypes.c_int), ("n_long_factor", ctypes.c_int)]


class _AttentionParams(ctypes.Structure):
    _fields_ = [("batch", ctypes.c_int), ("seq_len", ctypes.c_int),
                ("kv_len", ctypes.c_int), ("n_heads", ctypes.c_int),
                ("n_kv_heads", ctypes.c_int), ("head_dim", ctypes.c_int),
                ("start_pos", ctypes.c_long), ("causal", ctypes.c_int),
                ("freqs_cos", _float_p), ("freqs_sin", _float_p),
                ("table_len", ctypes.c_long), ("pairing", ctypes.c_int),
                ("keys_rotated", ctypes.c_int), ("n_threads", ctypes.c_int),
                ("simd", ctypes.c_int), ("lse", _float_p),
                ("progress", ctypes.c_void_p), ("progress_ctx", ctypes.c_void_p),
                ("kv_dtype", ctypes.c_int)]
_lib = None


def load(path=None):
    """Load librope.so (from path, $ROPE_LIB or ../build) and return it."""
    global _lib
    if path is None:
        path = os.environ.get("ROPE_LIB") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), os.pardir,
            "build", "librope.so")
    lib = ctypes.CDLL(os.path.abspath(path))
    i, l, d, f = ctypes.c_int, ctypes.c_long, ctypes.c_double, _float_p
    lib.rope_precompute_freqs_cis.argtypes = [f, f, i, l, d, i]
    lib.rope_precompute_freqs_cis.restype = i
    lib.rope_precompute_freqs_cis_scaled.argtypes = [
        f, f, i, l, d, ctypes.POINTER(_Scaling), i]
    lib.rope_precompute_freqs_cis_scaled.restype = i
    lib.rope_scaling_defaults.argtypes = [ctypes.POINTER(_Scaling)]
    lib.rope_scaling_defaults.restype = None
    lib.rope_scaling_strerror.argtypes = [i]
    lib.rope_scaling_strerror.restype = ctypes.c_char_p
    lib.rope_apply_rotary_pos_emb.argtypes = [f, f, f, f, i, i, i, i, i, l, i]
    lib.rope_apply_rotary_pos_emb.restype = None
    lib.rope_repeat_kv.argtypes = [f, f, i, i, i, i, i]
    lib.rope_repeat_kv.restype = i
    lib.rope_attention_defaults.argtypes = [ctypes.POINTER(_AttentionParams)]
    lib.rope_attention_defaults.restype = None
    lib.rope_attention.argtypes = [f, f, f, f, ctypes.POINTER(_AttentionParams)]
    lib.rope_attention.restype = i
    _lib = lib
    return lib


def _c():
    return _lib if _lib is not None else load()
_INT_MAX = 2**31 - 1


def _array(name, x, layout):
    """x as a C-ordered float32 array of len(layout) dimensions."""
    if not isinstance(x, np.ndarray) or x.dtype != np.float32:
        got = x.dtype if isinstance(x, np.ndarray) else type(x).__name__
        raise ValueError("%s must be a NumPy float32 array, got %s"
                         % (name, got))
    if x.ndim != len(layout) or 0 in x.shape:
        raise ValueError("%s must have the shape [%s], got %s"
                         % (name, ", ".join(layout), list(x.shape)))
    if max(x.shape) > _INT_MAX:
        raise ValueError("%s is too large for the C library" % name)
    return np.ascontiguousarray(x)


def _size(name, n, low=1):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise ValueError("%s must be an integer, got %r" % (name, n))
    if not low <= n <= _INT_MAX:
        raise ValueError("%s must be between %d and %d, got %d"
                         % (name, low, _INT_MAX, n))
    return int(n)


def _ptr(x):
    return x.ctypes.data_as(_float_p)
def precompute_freqs_cis(dim, end=32 * 1024, rope_base=1e6, rope_scaling=None):
    """RoPE tables (freqs_cos, freqs_sin), float32 arrays of shape [end, dim].

    MiniMind: precompute_freqs_cis, model/model_minimind.py lines 62-78
    at d65ef2c.  Book: chapter 3, "The frequencies and the tables, as
    MiniMind computes them" (rope_precompute_freqs_cis); with rope_scaling,
    a dict with MiniMind's keys, chapter 4, "MiniMind's YaRN, line by
    line" (rope_precompute_freqs_cis_scaled).
    """
    dim, end = _size("dim", dim), _size("end", end)
    if dim % 2:
        raise ValueError("dim must be even, got %d" % dim)
    rope_base = float(rope_base)
    if not 1.0 < rope_base < float("inf"):
        raise ValueError("rope_base must be finite and > 1, got %r" % rope_base)
    cos = np.empty((end, dim), np.float32)
    sin = np.empty((end, dim), np.float32)
    lib = _c()
    if rope_scaling is None:
        err = lib.rope_precompute_freqs_cis(_ptr(cos), _ptr(sin), dim, end,
                                            rope_base, ROPE_PRECISION_FLOAT)
        if err:
            raise ValueError("precompute_freqs_cis: invalid arguments "
                             "(dim %d, end %d, rope_base %r)"
                             % (dim, end, rope_base))
    else:
        s = _minimind_scaling(lib, rope_scaling)
        err = lib.rope_precompute_freqs_cis_scaled(
            _ptr(cos), _ptr(sin), dim, end, rope_base, ctypes.byref(s),
            ROPE_PRECISION_FLOAT)
        if err:
            raise ValueError("precompute_freqs_cis: "
                             + lib.rope_scaling_strerror(err).decode())
    return cos, sin
_MINIMIND_YARN_DEFAULTS = {"original_max_position_embeddings": 2048,
                           "factor": 16, "beta_fast": 32.0, "beta_slow": 1.0,
                           "attention_factor": 1.0}


def _minimind_scaling(lib, rope_scaling):
    if not isinstance(rope_scaling, dict):
        raise ValueError("rope_scaling must be None or a dict")
    unknown = set(rope_scaling) - set(_MINIMIND_YARN_DEFAULTS) - {"type"}
    if unknown:
        raise ValueError("rope_scaling: keys MiniMind does not read: %s"
                         % ", ".join(sorted(unknown)))
    v = dict(_MINIMIND_YARN_DEFAULTS, **rope_scaling)
    for key in ("factor", "beta_fast", "beta_slow", "attention_factor"):
        if not float(v[key]) > 0:
            raise ValueError("rope_scaling: %s must be positive, got %r"
                             % (key, v[key]))
    s = _Scaling()
    lib.rope_scaling_defaults(ctypes.byref(s))
    s.rope_type, s.yarn_flavor = ROPE_SCALING_YARN, ROPE_YARN_MINIMIND
    s.original_max_position_embeddings = _size(
        "original_max_position_embeddings", v["original_max_position_embeddings"])
    s.factor = float(v["factor"])
    s.beta_fast, s.beta_slow = float(v["beta_fast"]), float(v["beta_slow"])
    s.attention_factor = float(v["attention_factor"])
    return s
def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1, start_pos=0):
    """Rotate q [b, s, n_heads, d] and k [b, s, n_kv_heads, d]; return copies.

    cos, sin: [rows, d] float32 tables; token s uses row start_pos + s
    (MiniMind passes tables already sliced, start_pos 0).  MiniMind:
    apply_rotary_pos_emb with the nested rotate_half, lines 80-84 at
    d65ef2c.  Book: chapter 3, "Applying the rotation"
    (rope_apply_rotary_pos_emb); bit for bit equal given the same tables.
    """
    if unsqueeze_dim != 1:
        raise ValueError("only unsqueeze_dim=1 ([b, s, heads, d]) is supported")
    q = _array("q", q, ["batch", "seq_len", "n_heads", "head_dim"])
    k = _array("k", k, ["batch", "seq_len", "n_kv_heads", "head_dim"])
    cos = _array("cos", cos, ["positions", "head_dim"])
    sin = _array("sin", sin, ["positions", "head_dim"])
    b, n, h, d = q.shape
    if k.shape[0] != b or k.shape[1] != n or k.shape[3] != d:
        raise ValueError("k %s does not match q %s in batch, seq_len or head_dim"
                         % (list(k.shape), list(q.shape)))
    if d % 2:
        raise ValueError("head_dim must be even, got %d" % d)
    if cos.shape != sin.shape or cos.shape[1] != d:
        raise ValueError("cos %s and sin %s must both be [positions, %d]"
                         % (list(cos.shape), list(sin.shape), d))
    start_pos = _size("start_pos", start_pos, 0)
    if cos.shape[0] < start_pos + n:
        raise ValueError("the tables have %d rows; positions %d..%d need %d"
                         % (cos.shape[0], start_pos, start_pos + n - 1,
                            start_pos + n))
    qo, ko = q.copy(), k.copy()
    _c().rope_apply_rotary_pos_emb(_ptr(qo), _ptr(ko), _ptr(cos), _ptr(sin),
                                   b, n, h, k.shape[2], d, start_pos,
                                   ROPE_PAIRING_HALF)
    return qo, ko
def repeat_kv(x, n_rep):
    """x [b, s, n_kv_heads, d] -> [b, s, n_kv_heads * n_rep, d], head h from h // n_rep.

    MiniMind: repeat_kv, lines 86-89 at d65ef2c.  Book: chapter 5, "Fused
    RoPE and grouped heads" (rope_repeat_kv).  n_rep == 1 returns x.
    """
    x = _array("x", x, ["batch", "seq_len", "n_kv_heads", "head_dim"])
    n_rep = _size("n_rep", n_rep)
    if n_rep == 1:
        return x
    b, n, hk, d = x.shape
    _size("n_kv_heads * n_rep", hk * n_rep)
    out = np.empty((b, n, hk * n_rep, d), np.float32)
    if _c().rope_repeat_kv(_ptr(out), _ptr(x), b, n, hk, d, n_rep):
        raise ValueError("repeat_kv: invalid arguments")
    return out
_ATTENTION_ERRORS = {1: "a size is not positive",
                     2: "n_heads is not a multiple of n_kv_heads",
                     3: "seq_len exceeds kv_len",
                     4: "start_pos is negative",
                     5: "the tables need both cos and sin and an even head_dim",
                     6: "the tables are too short",
                     7: "out of memory",
                     8: "the attention output is not finite"}


def attention(q, k, v, causal=True, start_pos=0, cos=None, sin=None,
              keys_rotated=False, n_threads=1, return_lse=False):
    """Chapter 5's attention kernel with fused RoPE; returns [b, n, n_heads, d].

    q [b, n, n_heads, d]; k, v [b, n_kv, n_kv_heads, d]; n <= n_kv and
    n_heads % n_kv_heads == 0.  cos, sin: [rows, d] tables or None (no
    RoPE); key j sits at position start_pos + j, query i at start_pos +
    n_kv - n + i.  MiniMind: the core of Attention.forward, lines 118-131
    at d65ef2c (RoPE, KV cache, repeat_kv, causal softmax).  Book:
    chapter 5 (rope_attention).  return_lse adds the rows' log-sum-exp.
    """
    q = _array("q", q, ["batch", "seq_len", "n_heads", "head_dim"])
    k = _array("k", k, ["batch", "kv_len", "n_kv_heads", "head_dim"])
    v = _array("v", v, ["batch", "kv_len", "n_kv_heads", "head_dim"])
    b, n, h, d = q.shape
    nk, hk = k.shape[1], k.shape[2]
    if k.shape != v.shape or k.shape[0] != b or k.shape[3] != d:
        raise ValueError("k %s and v %s must be [%d, kv_len, n_kv_heads, %d]"
                         % (list(k.shape), list(v.shape), b, d))
    if h % hk:
        raise ValueError("n_heads %d is not a multiple of n_kv_heads %d" % (h, hk))
    if n > nk:
        raise ValueError("seq_len %d exceeds kv_len %d" % (n, nk))
    start_pos = _size("start_pos", start_pos, 0)
    if (cos is None) != (sin is None):
        raise ValueError("give both cos and sin, or neither")
    if cos is not None:
        cos = _array("cos", cos, ["positions", "head_dim"])
        sin = _array("sin", sin, ["positions", "head_dim"])
        if cos.shape != sin.shape or cos.shape[1] != d or d % 2:
            raise ValueError("cos and sin must both be [positions, %d], "
                             "head_dim even" % d)
        if cos.shape[0] < start_pos + nk:
            raise ValueError("the tables have %d rows; keys at positions "
                             "%d..%d need %d" % (cos.shape[0], start_pos,
                                                 start_pos + nk - 1, start_pos + nk))
    p = _AttentionParams()
    _c().rope_attention_defaults(ctypes.byref(p))
    p.batch, p.seq_len, p.kv_len = b, n, nk
    p.n_heads, p.n_kv_heads, p.head_dim = h, hk, d
    p.start_pos, p.causal = start_pos, 1 if causal else 0
    p.keys_rotated = 1 if keys_rotated else 0
    p.n_threads = _size("n_threads", n_threads)
    p.pairing = ROPE_PAIRING_HALF
    if cos is not None:
        p.freqs_cos, p.freqs_sin, p.table_len = _ptr(cos), _ptr(sin), cos.shape[0]
    lse = np.empty((b, n, h), np.float32)
    p.lse = _ptr(lse)
    out = np.empty_like(q)
    err = _c().rope_attention(_ptr(out), _ptr(q), _ptr(k), _ptr(v),
                              ctypes.byref(p))
    if err:
        msg = "attention: " + _ATTENTION_ERRORS.get(err, "error %d" % err)
        if err == 8:
            msg += ": " + _nonfinite_cause(q, k, v, lse)
        raise MemoryError(msg) if err == 7 else ValueError(msg)
    return (out, lse) if return_lse else out
def _nonfinite_cause(q, k, v, lse):
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not np.isfinite(x).all():
            return "%s holds inf or NaN" % name
    if not np.isfinite(lse).all():
        return "the scores of q and k overflow float"
    return "the weighted sums of v overflow float"
