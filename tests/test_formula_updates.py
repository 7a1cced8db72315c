"""Update rules (``θ ← θ − η ∇_θ L``) and concatenations / slices (``[P, Z]``, ``V[:, :r]``) in formula
checks: the paper side, the code side, refusals that must stay refusals, and check-level verdicts."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
import sympy as sp

from minirepo import make_repo
from verifier.analysis.code_sympy import sym, translate_source
from verifier.compiler.formulas import find_formula, update_in_claim
from verifier.engine import run_repo
from verifier.symbolic.latex import CONCAT, FormulaSyntaxError, Grad, parse_latex, parse_sympy, slice_of

theta, eta, L, lam, g, m, beta = (sym(n) for n in ("theta", "eta", "L", "lambda_", "g", "m", "beta"))
S = sp.Function


# ----------------------------------------------------------------------------------------- paper side
@pytest.mark.parametrize(
    ("claim", "expect", "update"),
    [
        ("SGD: θ ← θ − η ∇_θ L(θ)", "theta - eta * grad(L(theta), theta)", "theta"),
        ("R ← R − η g^R", "R - eta * g_R", "R"),
        ("w_{t+1} = w_t − α (g_t + λ w_t)", "w_t - alpha * (g_t + lam * w_t)", "w_t"),
        ("θ ← θ − η sign(∇_θ L)", "theta - eta * sign(grad(L, theta))", "theta"),
        ("m ← β m + (1−β) g", "beta * m + (1 - beta) * g", "m"),
        ("θ_t ← θ_{t-1} − η g_t", "theta_tm1 - eta * g_t", "theta_tm1"),
        # a new quantity, not a new value of the same variable: code often names it anew
        ("x_adv = x + ε sign(∇_x L)", "x + eps * sign(grad(L, x))", ""),
        ("x' = x + η g", "x + eta * g", ""),
        ("H^{(l+1)} = σ(A H^{(l)} W)", "sigma(matmul(A, H_l, W))", ""),
        ("Z_0 = [x_0^{(Class)}, x_0^{(1)}, ..., x_0^{(N)}] + E_{pos}", "concat(x_0_Class, x_0) + E_pos", ""),
        ("K̃ = [K_0, K_t]", "concat(K_0, K_t)", ""),
        ("A_init = (V[:, :r])ᵀ", "transpose((slice_ah(V, r)))", ""),
        ("R_init = (1/s) S[:r, :r]", "(1 / s) * slice_hh(S, r, r)", ""),
        ("B_init = U[:, :r]", "slice_ah(U, r)", ""),
        ("W_{u,[0,T]}^{(k-1)} = W_{u,[0,T]}^{(k)} − η g", "W_u0T_k - eta * g", ""),  # a bracket inside an index
    ],
)
def test_claims_compile_to_update_rules_and_structures(claim, expect, update):
    found = find_formula(claim.split(": ", 1)[-1])
    assert found is not None and (found.expect, found.update) == (expect, update), found


def test_the_check_reads_the_update_from_the_claim():
    claim = "SGD with L2 weight decay: θ ← θ − η (∇_θ L(θ) + λ θ); the learning rate is decayed."
    assert update_in_claim(claim, "theta - eta * (grad(L(theta), theta) + lam * theta)") == ("theta", True)
    assert update_in_claim(claim, "theta - eta * grad(L(theta), theta)") == ("", False)  # another formula
    # an equation over an iteration index: updates are tried first, other values compared as before
    assert update_in_claim("x_{k+1} = √α_k x_k + √(1 − α_k) ε", "sqrt(alpha_k) * x_k + sqrt(1 - alpha_k) * eps") == ("x_k", False)
    # a chain: "For k = K down to 1" is no symbol of the rule
    assert update_in_claim("For k = K down to 1: W^{(k-1)} = W^{(k)} - η g", "W_k - eta * g") == ("", False)


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        ("K̃(k,t) = [K_0^{0:P_k}, K_t^{P_k:P_k+l}]", "uses a concatenation of index ranges (which axis they cut is not stated)"),
        ("Z = [a_1, ..., b_N] + E", "uses a list with an ellipsis whose ends are not one indexed sequence"),
        ("y = x[::2] + b", "uses a slice with a step (a:b:c)"),
        ("[P_m, Z_m] = L_m([P_{m-1}, Z_{m-1}])", "one opaque quantity, nothing to compare"),
        ("σ = s * [0.1, 0.2]", "uses a list of numbers"),
    ],
)
def test_refusals_stay_refusals(claim, reason):
    found = find_formula(claim)
    assert found is not None and found.expect is None and found.latex is None
    assert reason in found.reason


@pytest.mark.parametrize("claim", ["target_modules = [q_proj, v_proj]", "y = [a, b, c]", "betas = [0.9, 0.999]"])
def test_lists_of_names_or_numbers_are_no_formula(claim):
    assert find_formula(claim) is None


def test_update_target_is_the_old_value_on_the_right():
    assert parse_sympy("theta <- theta - eta*g").update == "theta"
    assert parse_sympy("w_tp1 = w_t - eta*g").update == "w_t"
    assert not parse_sympy("w_tp1 = w_t - eta*g").update_arrow and parse_sympy("w <- w - eta*g").update_arrow
    assert parse_latex(r"\theta_t \leftarrow \theta_{t-1} - \eta g").update == "theta_tm1"
    assert parse_sympy("theta_t = theta_tm1 - eta*g").update is None  # θ_t = θ_{t-1} - ...: only with an arrow
    assert parse_sympy("x_adv = x + eta*g").update is None  # a new quantity, not a new value of x
    assert parse_sympy("theta - eta*g").update is None


def test_paper_structures():
    P, Z, V, r, W_O, h = (sym(n) for n in ("P", "Z", "V", "r", "W_O", "h"))
    assert parse_sympy("[P, Z]").expr == CONCAT(P, Z)
    assert parse_sympy("[P, Z]").expr != parse_sympy("[Z, P]").expr  # ordered
    assert parse_sympy("V[:, :r]").expr == S("slice_ah")(V, r)
    assert parse_sympy("V[0:r, :]").expr == parse_sympy("V[:r]").expr == S("slice_h")(V, r)  # zero start, trailing ':'
    assert parse_latex(r"[x_{cls}, x_1, \ldots, x_N] + E_{pos}").expr == CONCAT(sym("x_cls"), sym("x")) + sym("E_pos")
    assert parse_latex(r"W_O [h_1, \ldots, h_H]").expr == S("matmul")(W_O, CONCAT(h))  # a tensor beside a capital
    assert parse_latex(r"\frac{1}{s} S[:r, :r]").expr == S("slice_hh")(sym("S"), r, r) / sym("s")
    assert slice_of(V, [("a", []), ("a", [])]) == V
    with pytest.raises(FormulaSyntaxError, match="step"):
        parse_sympy("V[::2]")
    with pytest.raises(FormulaSyntaxError, match="ellipsis|sequence"):
        parse_latex(r"[a_1, \ldots, b_N]")


# ----------------------------------------------------------------------------------------- code side
def _values(source: str, structures=frozenset()) -> dict[str, sp.Expr]:
    return {f"{m.qualname}:{c.target}": c.expr for m in translate_source(dedent(source), structures=structures) for c in m.candidates}


def test_in_place_updates_are_the_new_value_of_their_receiver():
    got = _values(
        """
        import jax
        import torch

        def a(theta, lr, grad):
            theta = theta - lr * grad

        def b(params, lr):
            for p in params:
                p.data.add_(p.grad, alpha=-lr)

        def c(params, lr, wd):
            for p in params:
                p.sub_(lr * (p.grad + wd * p))

        def d(params, grads, lr):
            params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)

        def e(m, g, beta):
            m.mul_(beta).add_(g, alpha=1 - beta)

        def f(w, lr):
            with torch.no_grad():
                w -= lr * w.grad

        def h(p, lr, g):
            p.copy_(p - lr * g)

        def k(v, g, beta2):
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)

        def q(p, n):
            p.div_(n)
        """
    )
    p, lr, grad, wd, w = (sym(n) for n in ("p", "lr", "grad", "wd", "w"))
    assert got["a:theta"] == theta - lr * grad
    assert got["b:p"] == p - lr * grad
    assert got["c:p"] == p - lr * (grad + wd * p)
    assert got["d:params"] == sym("params") - lr * sym("grads")
    assert got["e:m"] == beta * m + (1 - beta) * g
    assert got["f:w"] == w - lr * grad
    assert got["h:p"] == p - lr * g
    v, beta2, n = sym("v"), sym("beta2"), sym("n")
    assert got["k:v"] == beta2 * v + (1 - beta2) * g**2
    assert got["q:p"] == p / n


def test_concatenations_and_slices_only_when_the_formula_has_them():
    source = """
        import torch

        def f(cls, patches, U, r, pos):
            x = torch.cat([cls, patches], dim=1) + pos
            y = torch.stack([cls, patches], dim=1)
            B = U[:, :r]
            return x
        """
    kept = _values(source, frozenset({"concat", "slice"}))
    cls, patches, U, r, pos = (sym(n) for n in ("cls", "patches", "U", "r", "pos"))
    assert kept["f:x"] == CONCAT(cls, patches) + pos
    assert kept["f:y"] == sym("y")  # stack is not a concatenation: a new tensor
    assert kept["f:B"] == S("slice_ah")(U, r)
    plain = _values(source)
    assert plain["f:x"] == sym("x") and plain["f:B"] == U  # as before: a new tensor, indexing keeps the value


# ----------------------------------------------------------------------------------------- the check
def verdict(tmp_path: Path, source: str, claim: str | None = None, check: dict | None = None):
    sau = {"id": "t-D2-001", "dimension": "methodological", "claim": claim or "a rule"}
    if check is not None:
        sau["check"] = {"kind": "formula", **check}
    repo = make_repo(tmp_path, {"train.py": source}, [sau])
    v = {v.id: v for v in run_repo(repo, use_cache=False).verdicts}["t-D2-001"]
    return v.status.value, v.score, [(e.file, e.line) for e in v.evidence][:1]


SGD = """
    import torch


    @torch.no_grad()
    def sgd_step(params, lr, weight_decay):
        for p in params:
            p.sub_(lr * (p.grad + weight_decay * p))
    """
SGD_CLAIM = "SGD with weight decay: θ ← θ − η (∇_θ L(θ) + λ θ)"


def test_update_rule_pass_mismatch_unverified(tmp_path):
    assert verdict(tmp_path / "a", SGD, SGD_CLAIM) == ("pass", 1.0, [("train.py", 8)])
    dropped = SGD.replace("(p.grad + weight_decay * p)", "p.grad")
    assert verdict(tmp_path / "b", dropped, SGD_CLAIM) == ("mismatch", 0.0, [("train.py", 8)])
    library = """
        import torch

        def train(model, loss, lr, weight_decay):
            opt = torch.optim.SGD(model.parameters(), lr=lr, weight_decay=weight_decay)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """
    status, score, _ = verdict(tmp_path / "c", library, SGD_CLAIM)
    assert (status, score) == ("unverified", None)  # the library optimizer may apply the rule: never a failure


def test_a_different_hand_written_update_next_to_a_library_optimizer_is_unverified(tmp_path):
    source = SGD.replace("(p.grad + weight_decay * p)", "torch.sign(p.grad)") + (
        "\n\ndef make(params, lr):\n    return torch.optim.AdamW(params, lr=lr)\n"
    )
    assert verdict(tmp_path, source, SGD_CLAIM)[:2] == ("unverified", None)


def test_update_rule_needs_the_assigned_variable_on_the_right(tmp_path):
    # `loss = lr * p.grad` computes a value, not a new value of a variable: no update decides the rule
    source = """
        def step(p, lr):
            delta = p - lr * p.grad
            return None
        """
    status, score, _ = verdict(tmp_path, source, "θ ← θ − η ∇_θ L")
    assert (status, score) == ("unverified", None)


PROMPTS = """
    import torch

    def tokens(cls, prompts, patches, pos):
        x = torch.cat([cls, prompts, patches], dim=1)
        return x + pos
    """
CAT = {"expect": "[c, P, X] + E", "symbols": {"c": "cls", "P": "prompts", "X": "patches", "E": "pos"}}


def test_concatenation_pass_mismatch_unverified(tmp_path):
    assert verdict(tmp_path / "a", PROMPTS, check=CAT) == ("pass", 1.0, [("train.py", 6)])
    swapped = PROMPTS.replace("[cls, prompts, patches]", "[cls, patches, prompts]")
    assert verdict(tmp_path / "b", swapped, check=CAT) == ("mismatch", 0.0, [("train.py", 6)])
    stacked = PROMPTS.replace("torch.cat", "torch.stack")
    assert verdict(tmp_path / "c", stacked, check=CAT)[:2] == ("unverified", None)


SVD = """
    import torch

    def factors(delta_w, rank):
        U, S, Vh = torch.linalg.svd(delta_w)
        A = Vh[:rank]
        return A
    """


def test_slice_pass_mismatch_unverified(tmp_path):
    check = {"expect": "V_h[:r]", "symbols": {"V_h": "Vh", "r": "rank"}}
    assert verdict(tmp_path / "a", SVD, check=check) == ("pass", 1.0, [("train.py", 6)])
    assert verdict(tmp_path / "b", SVD.replace("Vh[:rank]", "Vh[: 2 * rank]"), check=check) == ("mismatch", 0.0, [("train.py", 6)])
    # the paper's (V[:, :r])^T is the code's Vh[:r] when Vh = V^T: another layout is no evidence either way
    transposed = {"expect": "transpose(V[:, :r])", "symbols": {"V": "Vh", "r": "rank"}}
    assert verdict(tmp_path / "c", SVD, check=transposed) == ("unverified", None, [("train.py", 6)])
    lowrank = SVD.replace("torch.linalg.svd(delta_w)", "torch.svd_lowrank(delta_w, q=rank)").replace("Vh[:rank]", "Vh.T")
    assert verdict(tmp_path / "d", lowrank, check=check)[:2] == ("unverified", None)  # truncated by the library


NOISING = """
    import torch

    def add_noise(x, alpha_k):
        noise = torch.randn_like(x)
        x_noisy = torch.sqrt(alpha_k) * x + torch.sqrt(1 - alpha_k) * noise
        return x_noisy
    """


def test_an_equation_over_an_iteration_index_also_matches_a_new_name(tmp_path):
    # x_{k+1} = f(x_k) without an arrow: the code may name the new value anew (x_noisy); updates come first
    claim = "Forward noising: x_{k+1} = √α_k x_k + √(1 − α_k) ε"
    assert verdict(tmp_path / "a", NOISING, claim) == ("pass", 1.0, [("train.py", 6)])
    dropped = NOISING.replace("torch.sqrt(alpha_k) * x", "x")
    assert verdict(tmp_path / "b", dropped, claim) == ("mismatch", 0.0, [("train.py", 6)])


ADAM_MOMENTS = """
    import torch

    def moments(exp_avg, exp_avg_sq, grad, beta1, beta2):
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    """


def test_an_update_of_another_variable_is_no_evidence(tmp_path):
    check = {"expect": "m <- beta*m + (1 - beta)*g"}
    assert verdict(tmp_path / "a", ADAM_MOMENTS, "first moment: m ← β m + (1 − β) g", check=check) == ("pass", 1.0, [("train.py", 5)])
    # the first moment in a fused call the translator does not read; the second moment's update is another
    # rule for another variable (m -> exp_avg fits the names): it cannot contradict m's rule
    fused = ADAM_MOMENTS.replace("exp_avg.lerp_(grad, 1 - beta1)", "torch._foreach_lerp_([exp_avg], [grad], 1 - beta1)")
    assert verdict(tmp_path / "b", fused, "first moment: m ← β m + (1 − β) g", check=check)[:2] == ("unverified", None)


def test_an_arrow_rule_compiles_to_a_self_contained_update_check(tmp_path):
    from verifier.compiler import compile_claim
    from verifier.spec.model import SAU

    claim = "Sign-SGD step: θ ← θ − η sign(∇_θ L)."
    (check,) = compile_claim(SAU(id="t-D2-001", dimension="D2", claim=claim)).checks
    assert check.expect == "theta <- theta - eta * sign(grad(L, theta))"
    # the compiled check, written into a spec as a user would, decides the repo by itself (no claim text to read)
    code = """
        import torch

        def step(theta, loss, lr):
            loss.backward()
            with torch.no_grad():
                theta -= lr * torch.sign(theta.grad)
            return theta
        """
    sau = {"id": "t-D2-001", "dimension": "methodological", "claim": "a step",
           "check": {"kind": "formula", "expect": check.expect}}
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "a", {"opt.py": code}, [sau]), use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("pass", 1.0, "opt.py", 7)
    drifted = code.replace("torch.sign(theta.grad)", "theta.grad")
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "b", {"opt.py": drifted}, [sau]), use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.score, v.evidence[0].line) == ("mismatch", 0.0, 7)
    # the loss applied to θ, `L(θ)`: the argument's name is no reason to doubt that `loss` is L
    applied = {**sau, "check": {"kind": "formula", "expect": "theta <- theta - eta * sign(grad(L(theta), theta))"}}
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "c", {"opt.py": code}, [applied]), use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.score, v.evidence[0].line) == ("pass", 1.0, 7)
