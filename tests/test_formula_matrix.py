"""Matrix algebra in formula checks: code products and transposes, the paper's juxtaposition, ordered
equivalence on random matrices, and LoRA / attention / projection claims end to end on small repos."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from test_formula_check import formula, make_repo, verdicts
from verifier.analysis.code_sympy import translate_source
from verifier.analysis.equivalence import MATRIX_SIZE, decide, normalize_matrices, screen
from verifier.compiler.formulas import find_formula, to_sympy
from verifier.symbolic.core import matmul, sym, transpose
from verifier.symbolic.latex import parse_latex, parse_sympy

A, B, C, K, Q, V, W, W0, s, x, alpha = (sym(n) for n in "A B C K Q V W W0 s x alpha".split())


# ----- 1. code -> SymPy --------------------------------------------------------------------------------------
CODE = """
import math
import numpy as np
import jax.numpy as jnp
import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.gate = nn.Linear(d, d, bias=False)

    def forward(self, x, A, B, q, k, W, b):
        at_op = A @ B
        torch_matmul = torch.matmul(A, B)
        torch_mm = torch.mm(A, B)
        torch_bmm = torch.bmm(q, k.transpose(1, 2))
        np_dot = np.dot(A, B)
        np_matmul = np.matmul(A, B)
        jnp_matmul = jnp.matmul(A, B.T)
        last_two = q @ k.transpose(-1, -2)
        batched_t = k.mT @ q
        permuted = k.permute(0, 2, 1)
        heads = q.transpose(1, 2)
        linear = F.linear(x, W, b)
        linear_nobias = F.linear(x, W)
        layer = self.proj(x)
        layer_nobias = self.gate(x)
        e_mm = torch.einsum("ij,jk->ik", A, B)
        e_bmm = torch.einsum("bij,bkj->bik", A, B)
        e_ell = torch.einsum("...d,ed->...e", x, W)
        e_sim = torch.einsum("nc,kc->nk", q, k)
        e_out = torch.einsum("ij,kj->ki", A, B)
        e_trace = torch.einsum("ij,ij->i", A, B)
        inner = torch.dot(q, k)
        return at_op
"""


@pytest.fixture(scope="module")
def translated() -> dict[str, sp.Expr]:
    (model,) = [m for m in translate_source(CODE) if m.qualname == "Block.forward"]
    return {c.target: c.expr for c in model.candidates}, model


@pytest.mark.parametrize(
    "target, expect",
    [
        ("at_op", "matmul(A, B)"),
        ("torch_matmul", "matmul(A, B)"),
        ("torch_mm", "matmul(A, B)"),
        ("torch_bmm", "matmul(q, transpose(k))"),  # transpose(1, 2) right before a product swaps the matrix axes
        ("np_dot", "matmul(A, B)"),
        ("np_matmul", "matmul(A, B)"),
        ("jnp_matmul", "matmul(A, transpose(B))"),
        ("last_two", "matmul(q, transpose(k))"),
        ("batched_t", "matmul(transpose(k), q)"),
        ("permuted", "transpose(k)"),
        ("heads", "q"),  # a head shuffle elsewhere keeps the value, as view/reshape do
        ("linear", "b + matmul(x, transpose(W))"),
        ("linear_nobias", "matmul(x, transpose(W))"),
        ("layer", "proj_bias + matmul(x, transpose(proj_weight))"),
        ("layer_nobias", "matmul(x, transpose(gate_weight))"),
        ("e_mm", "matmul(A, B)"),
        ("e_bmm", "matmul(A, transpose(B))"),
        ("e_ell", "matmul(x, transpose(W))"),
        ("e_sim", "matmul(q, transpose(k))"),
        ("e_out", "transpose(matmul(A, transpose(B)))"),
        ("e_trace", "e_trace"),  # no contracted index: an opaque call, its result a leaf
        ("inner", "rsum(k*q)"),  # torch.dot is the 1-D inner product
    ],
)
def test_code_matrix_forms(translated, target, expect):
    exprs, _ = translated
    assert str(exprs[target]) == expect


def test_layer_weights_are_marked_for_their_library_orientation(translated):
    _, model = translated
    assert model.layer_weights == {"proj_weight", "gate_weight"}


# ----- 2. the paper side --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "latex, expect",
    [
        (r"W_0 + s B A", "W_0 + s*matmul(B, A)"),
        (r"\mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d}}\right) V",
         "matmul(exp(matmul(Q, transpose(K))/sqrt(d))/rsum(exp(matmul(Q, transpose(K))/sqrt(d))), V)"),
        (r"W^\top x", "matmul(transpose(W), x)"),
        (r"h = W_0 x + \frac{\alpha}{r} B A x", "alpha*matmul(B, A, x)/r + matmul(W_0, x)"),  # W_0 is a matrix too
        (r"A \cdot B", "matmul(A, B)"),
        (r"A \times B", "A*B"),
        (r"x W^\top + b", "b + matmul(x, transpose(W))"),  # a lone matrix last: x is the row vector  # \times between matrices is not read as their product
        (r"\gamma^T r", "gamma*r"),  # a Greek base: not a transpose
        (r"(1 - \alpha) L + \alpha K", "K*alpha + L*(1 - alpha)"),  # one capital per product: elementwise
    ],
)
def test_latex_juxtaposition_and_transposes(latex, expect):
    assert str(parse_latex(latex).expr) == expect


def test_sympy_syntax_matrix_operators_and_declared_matrices():
    assert str(parse_sympy("W0 + s*(B @ A)").expr) == "W0 + s*matmul(B, A)"
    assert str(parse_sympy("(Q @ K)^T").expr) == "transpose(matmul(Q, K))"
    assert str(parse_sympy("xᵀ @ W").expr) == "matmul(transpose(x), W)"
    assert str(parse_sympy("1 - beta1^T").expr) == "1 - beta1**T"  # a Greek base keeps its power
    assert parse_sympy("B @ A").matrices is None
    assert parse_sympy("s*matmul(B, R, A)", matrices=["B", "R", "A"]).matrices == frozenset({"A", "B", "R"})
    assert parse_latex(r"s B A").matrices == frozenset({"A", "B"})


@pytest.mark.parametrize(
    "text, expect",
    [
        ("W_0 + s B A", "W_0 + s * matmul(B, A)"),
        ("s B g^R A", "s * matmul(B, g_R, A)"),
        ("Softmax(QK^T / √d) V", "matmul(softmax(matmul(Q, transpose(K)) / sqrt(d)), V)"),
        ("Q·K^T", "matmul(Q, transpose(K))"),
        ("x^T W y", "matmul(transpose(x), W, y)"),
        ("W_0 x + s B A x", "matmul(W_0, x) + s * matmul(B, A, x)"),
        ("(1 - α) L_simple", "(1 - alpha) * L_simple"),
        ("x W^T + b", "matmul(x, transpose(W)) + b"),
        ("α W^T x", "alpha * matmul(transpose(W), x)"),
    ],
)
def test_compiler_emits_matrix_products(text, expect):
    assert to_sympy(text) == (expect, "")
    assert parse_sympy(expect).expr.free_symbols


@pytest.mark.parametrize(
    "text, why",
    [
        ("W h + b", "one capital symbol"),  # W applied to h, or a scalar W times h: no sign which
        ("γ^T r", "scalar"),
        ("(1 + s)^{-1} G", "power -1 of a scalar"),  # a reciprocal or an inverse function: (BᵀB)⁻¹ is inv
    ],
)
def test_compiler_still_refuses_what_has_no_matrix_reading(text, why):
    expect, reason = to_sympy(text)
    assert expect is None and why in reason


# ----- 3. equivalence -----------------------------------------------------------------------------------------
def test_a_commuted_product_is_a_mismatch_with_a_matrix_counterexample():
    d = decide(matmul(B, A), matmul(A, B))
    assert d.kind == "not-equivalent" and d.reason == "confirmed at 50 digits"
    values = d.counterexample["values"]
    assert sorted(values) == ["A", "B"]
    assert len(values["A"]) == MATRIX_SIZE and all(len(row) == MATRIX_SIZE for row in values["A"])
    assert d.counterexample["paper"] != d.counterexample["code"]


@pytest.mark.parametrize(
    "paper, code",
    [
        (transpose(matmul(A, B)), matmul(transpose(B), transpose(A))),
        (s * matmul(B, A), matmul(B, s * A)),  # scalar factors commute with matrices
        (W0 + s * matmul(B, A), W0 + matmul(s * B, A)),
        (matmul(A, B + C), matmul(A, B) + matmul(A, C)),
        (transpose(transpose(A) + matmul(B, C)), A + matmul(transpose(C), transpose(B))),
        (matmul(A, B, C), matmul(matmul(A, B), C)),
    ],
)
def test_matrix_identities_are_proven(paper, code):
    d = decide(paper, code)
    assert d.kind == "proven" and d.method == "expand"


@pytest.mark.parametrize(
    "paper, code",
    [
        (transpose(matmul(A, B)), matmul(transpose(A), transpose(B))),
        (matmul(B, A), matmul(B, transpose(A))),
        (W0 + s * matmul(B, A), W0 + matmul(B, A)),
        (matmul(Q, transpose(K)), matmul(Q, K)),
    ],
)
def test_matrix_drifts_are_caught(paper, code):
    assert decide(paper, code).kind == "not-equivalent"


def test_column_vector_paper_equals_row_vector_code():
    # the paper's W x with x a column is the code's x W^T with x a row (F.linear, nn.Linear)
    d = decide(matmul(W, x), matmul(x, transpose(W)))
    assert d.kind == "proven" and d.orientation == "flipped"
    assert decide(matmul(W, x), matmul(x, W)).kind == "not-equivalent"  # x W is neither reading


def test_which_factor_of_a_scaled_operand_is_the_matrix_is_not_guessed():
    # (alpha * x) @ W: alpha or x is the matrix; both readings equal alpha x W, so it passes ...
    assert screen(alpha * matmul(x, W), matmul(alpha * x, W)).kind == "numerically-equivalent"
    # ... but with only W declared a matrix, alpha x W (alpha outside the product) equals the code in the
    # reading where x is the matrix and not where alpha is: undecided, never a guess
    undecided = screen(alpha * matmul(x, W), matmul(alpha * x, W), matrices=frozenset({"W"}))
    assert undecided.kind == "undecided" and "alpha, x" in undecided.reason


def test_normal_form_pushes_transposes_and_pulls_scalars():
    names = frozenset("A B C".split())
    assert normalize_matrices(transpose(matmul(s * A, B + C)), names) == s * matmul(transpose(B), transpose(A)) + s * matmul(
        transpose(C), transpose(A)
    )


# ----- 4. end to end ------------------------------------------------------------------------------------------
LORA = """
    import torch
    from torch import nn


    class LoRALinear(nn.Module):
        def __init__(self, base, r, alpha):
            super().__init__()
            self.base = base
            self.lora_A = nn.Parameter(torch.zeros(r, base.in_features))
            self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
            self.scaling = alpha / r

        def merged_weight(self, W0):
            delta = self.lora_B @ self.lora_A
            return W0 + self.scaling * delta
    """
LORA_CHECK = {"latex": r"W_0 + s B A", "symbols": {"s": "self.scaling", "B": "self.lora_B", "A": "self.lora_A"}}


def lora_verdict(tmp_path: Path, source: str):
    repo = make_repo(tmp_path, {"lora.py": source}, [formula("t-D2-001", claim="LoRA merged weight", **LORA_CHECK)])
    return verdicts(repo)["t-D2-001"]


def test_lora_faithful_passes(tmp_path):
    v = lora_verdict(tmp_path, LORA)
    assert v.status.value == "pass" and v.score == 1.0
    assert "proven" in v.message
    assert [(e.file, e.line, e.role) for e in v.evidence] == [("lora.py", 16, "expression")]


@pytest.mark.parametrize(
    "old, new, shown",
    [
        ("self.lora_B @ self.lora_A", "self.lora_A @ self.lora_B", "matmul(lora_A, lora_B)"),  # swapped
        ("W0 + self.scaling * delta", "W0 + delta", "W0 + matmul(lora_B, lora_A)"),  # scale dropped
        ("self.lora_B @ self.lora_A", "self.lora_B @ self.lora_A.T", "matmul(lora_B, transpose(lora_A))"),
    ],
    ids=["swapped", "missing-scale", "transposed"],
)
def test_lora_drifts_fail_with_a_matrix_counterexample(tmp_path, old, new, shown):
    v = lora_verdict(tmp_path, LORA.replace(old, new))
    assert v.status.value == "mismatch" and v.score == 0.0
    assert shown in v.message and "differs from the formula: at " in v.message
    assert [(e.file, e.line) for e in v.evidence] == [("lora.py", 16)]
    assert len(v.checks[0].details["counterexample"]["values"]["lora_A"]) == MATRIX_SIZE


ATTENTION = """
    import math
    import torch
    from torch import nn


    class SelfAttention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim

        def attend(self, q, k, v):
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.dim)
            weights = torch.softmax(scores, dim=-1)
            return weights @ v
    """
ATTENTION_CHECK = {
    "latex": r"\mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d}}\right) V",
    "symbols": {"Q": "q", "K": "k", "V": "v", "d": "self.dim"},
}


@pytest.mark.parametrize(
    "old, new, status",
    [("", "", "pass"), ("k.transpose(-2, -1)", "k", "mismatch"), ("weights @ v", "v @ weights", "mismatch")],
    ids=["faithful", "no-transpose", "value-first"],
)
def test_attention_end_to_end(tmp_path, old, new, status):
    source = ATTENTION.replace(old, new) if old else ATTENTION
    repo = make_repo(tmp_path, {"attn.py": source}, [formula("t-D2-002", claim="scaled dot-product attention", **ATTENTION_CHECK)])
    v = verdicts(repo)["t-D2-002"]
    assert v.status.value == status and v.score == (1.0 if status == "pass" else 0.0)
    assert [(e.file, e.line) for e in v.evidence] == [("attn.py", 15)]


PROJECTION = """
    import torch
    from torch import nn


    class Projection(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.proj = nn.Linear(d_in, d_out)

        def forward(self, x):
            h = self.proj(x)
            return torch.tanh(h)
    """


@pytest.mark.parametrize(
    "latex, status",
    [(r"\tanh(W x + b)", "pass"), (r"\tanh(x W + b)", "pass"), (r"\tanh(W^\top x + b)", "pass"), (r"\tanh(W x)", "mismatch")],
    ids=["column-convention", "row-convention", "transposed-weight", "bias-dropped"],
)
def test_linear_layer_projection(tmp_path, latex, status):
    # nn.Linear stores its weight as (out, in): the paper's W may be it or its transpose, both conventions pass
    check = {"latex": latex, "symbols": {"W": "proj_weight", "b": "proj_bias", "x": "x"}, "matrices": ["W"]}
    repo = make_repo(tmp_path, {"proj.py": PROJECTION}, [formula("t-D2-003", claim="projection", **check)])
    v = verdicts(repo)["t-D2-003"]
    assert v.status.value == status
    assert [(e.file, e.line) for e in v.evidence] == [("proj.py", 13)]


def test_a_compiled_lora_claim_passes_and_a_swapped_repo_fails(tmp_path):
    found = find_formula("W = W₀ + s B A")
    assert found.expect == "W0 + s * matmul(B, A)"
    check = {"expect": found.expect, "symbols": {"W0": "W0", "s": "self.scaling", "B": "self.lora_B", "A": "self.lora_A"}}
    good = make_repo(tmp_path / "good", {"lora.py": LORA}, [formula("t-D2-004", **check)])
    bad = make_repo(tmp_path / "bad", {"lora.py": LORA.replace("self.lora_B @ self.lora_A", "self.lora_A @ self.lora_B")},
                    [formula("t-D2-004", **check)])
    assert verdicts(good)["t-D2-004"].status.value == "pass"
    assert verdicts(bad)["t-D2-004"].status.value == "mismatch"


VIT = """
    import torch
    from torch import nn


    class Head(nn.Module):
        def __init__(self, dim, head_dim):
            super().__init__()
            self.q = nn.Linear(dim, head_dim, bias=False)

        def queries(self, z):
            return self.q(z)
    """


@pytest.mark.parametrize(
    "source, status",
    [(VIT, "pass"), (VIT.replace("return self.q(z).T", "x"), "pass"), (VIT.replace("self.q(z)", "self.q(z.T)"), "mismatch")],
    ids=["row-tokens", "column-output", "transposed-input"],
)
def test_a_capital_input_is_data_in_the_other_convention(tmp_path, source, status):
    # the paper's Q = W_Q Z with tokens as columns; the code's tokens are rows: z W^T (a row result), or its
    # transpose W z^T (a column result, the paper's Q itself); transposing the input instead is a drift
    check = {"expect": "matmul(W_Q, Z)", "symbols": {"W_Q": "self.q.weight", "Z": "z"}}
    repo = make_repo(tmp_path, {"vit.py": source}, [formula("t-D2-005", claim="query projection", **check)])
    v = verdicts(repo)["t-D2-005"]
    assert v.status.value == status
    assert [(e.file, e.line) for e in v.evidence] == [("vit.py", 12)]


def test_a_row_result_keeps_its_orientation():
    g, W_zs = sym("g"), sym("W_zs")
    # the paper's g^T W (g a column embedding) is the code's feats @ W (feats a row)
    assert decide(matmul(transpose(g), W_zs), matmul(g, W_zs)).orientation == "rows"


def test_swapping_two_inputs_is_not_excused_as_the_other_convention():
    # with both factors inputs (data), transposing all of them would relabel B A as A B: never tried
    d = screen(matmul(B, A), matmul(A, B), inputs=frozenset({"A", "B"}), subs={A: A, B: B})
    assert d.kind == "not-equivalent"
    b_, a_ = sym("b"), sym("a")
    assert screen(matmul(b_, a_), matmul(a_, b_)).kind == "not-equivalent"  # lower-case names alike


GAS = """
    def pressure_volume(n, R, T):
        pv = n * R * T
        return pv
    """


@pytest.mark.parametrize(
    "check, status",
    [({"latex": r"n R T"}, "pass"), ({"expect": "n * matmul(R, T)"}, "pass"),
     ({"latex": r"n R T", "matrices": ["R", "T"]}, "mismatch")],
    ids=["latex", "compiled", "declared"],
)
def test_capitals_side_by_side_are_scalars_against_scalar_code(tmp_path, check, status):
    # n R T of a physics paper: against code with no matrix product it is the elementwise product; only a
    # declared (or transposed, or `@`) matrix insists on the matrix reading
    repo = make_repo(tmp_path, {"gas.py": GAS}, [formula("t-D2-006", claim="ideal gas pressure volume", **check)])
    v = verdicts(repo)["t-D2-006"]
    assert v.status.value == status
    assert [(e.file, e.line) for e in v.evidence] == [("gas.py", 3)]
