"""`dataset` and `metric` rules on names outside their alias tables: matched on word pieces, only where data is
loaded or a metric computed/logged; a mention stays `missing` with the mention as evidence."""

from __future__ import annotations

import pytest

from verifier.analysis.protocol import implementation, load_rule, with_defaults
from verifier.analysis.protocol.common import acronym, name_spans, spelling_pattern
from verifier.analysis.protocol.examples import context_for


def run(rule: str, expect: str, files: dict[str, str]):
    ctx = context_for(files)
    return implementation(rule)(with_defaults(rule, {"expect": expect}), ctx, None, load_rule(rule))


def where(result) -> list[tuple[str, int, str]]:
    return [(e.file, e.line, e.role) for e in result.evidence]


# ----- the name matcher ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "spelling", "found"),
    [
        ("data/era5_t2m.nc", "era5", True),
        ("ERA5Dataset", "era5", True),
        ("pde_bench/2D_CFD.h5", "pdebench", True),
        ("zwhe99/commonsense_170k", "commonsense170k", True),
        ("hendrycks/competition_math", "math", True),
        ("mathematics", "math", False),
        ("slice_000.npy", "sl", False),
        ("cifar100", "cifar10", False),
        ("aestheticQuality", "aestheticquality", True),
    ],
)
def test_names_match_on_word_pieces_with_digits_kept(text, spelling, found):
    assert bool(name_spans(text, {spelling})) is found


def test_acronyms_only_when_specific():
    assert acronym("Navier-Stokes 2D") == "ns2d"
    assert acronym("Shallow Water Equations") == "swe"
    assert acronym("Darcy Flow") is None  # "df" would match anything
    assert acronym("uoft-cs/cifar10") is None
    assert acronym("ERA5") is None


def test_spelling_pattern_prefilters_identifier_spellings():
    pattern = spelling_pattern(["aesthetic quality"])
    assert pattern.search("x = aesthetic_quality(v)") and pattern.search("aestheticquality")
    assert not pattern.search("aesthetic of quality")


# ----- dataset --------------------------------------------------------------------------------------------------
def test_file_reader_path_names_a_dataset_outside_the_table():
    r = run("dataset", "Navier-Stokes 2D", {"train.py": "import numpy as np\nu = np.load('data/ns_2d.npy')\n"})
    assert (r.status.value, r.score) == ("pass", 1.0)
    assert where(r) == [("train.py", 2, "rule")]


def test_xarray_open_dataset_and_hub_id():
    r = run("dataset", "SEVIR", {"train.py": "import xarray as xr\n\nds = xr.open_dataset('/data/sevir/vil.nc')\n"})
    assert (r.status.value, r.score, where(r)) == ("pass", 1.0, [("train.py", 3, "rule")])
    r = run("dataset", "TinyStories", {"train.py": "from datasets import load_dataset\nds = load_dataset('roneneldan/TinyStories')\n"})
    assert (r.status.value, where(r)) == ("pass", [("train.py", 2, "rule")])


def test_a_loader_by_name_is_preferred_evidence_to_a_file_path():
    files = {"sample.py": "import numpy as np\nx = np.load('data/celeba64_train.npy')\n",
             "train.py": "from torchvision import datasets\nds = datasets.CelebA('data', download=True)\n"}
    r = run("dataset", "CelebA", files)
    assert r.status.value == "pass" and "(train.py:2)" in r.message
    assert where(r) == [("sample.py", 2, "rule"), ("train.py", 2, "rule")]


def test_table_names_now_found_in_files_too():
    r = run("dataset", "ERA5", {"train.py": "import xarray as xr\nds = xr.open_dataset('era5.nc')\n"})
    assert (r.status.value, where(r)) == ("pass", [("train.py", 2, "rule")])
    r = run("dataset", "BoolQ", {"train.py": "from datasets import load_dataset\nds = load_dataset('super_glue', 'boolq')\n"})
    assert (r.status.value, where(r)) == ("pass", [("train.py", 2, "rule")])


def test_config_path_passes_only_when_a_loader_reads_it():
    config = {"configs/base.yaml": "data:\n  data_path: /data/pdebench/2D_CFD.hdf5\n  batch_size: 8\n"}
    read = "import h5py\nimport yaml\ncfg = yaml.safe_load(open('configs/base.yaml'))\nf = h5py.File(cfg['data']['data_path'], 'r')\n"
    r = run("dataset", "PDEBench", {**config, "train.py": read})
    assert (r.status.value, r.score) == ("pass", 1.0)
    assert where(r) == [("configs/base.yaml", 2, "effective"), ("train.py", 4, "rule")]
    unread = "import numpy as np\nimport yaml\ncfg = yaml.safe_load(open('configs/base.yaml'))\nu = np.random.randn(8, 64)\n"
    r = run("dataset", "PDEBench", {**config, "train.py": unread})
    assert (r.status.value, r.score, r.details["taxonomy"]) == ("missing", 0.0, "mention")
    assert where(r) == [("configs/base.yaml", 2, "mention")]


def test_dataset_flag_reaches_the_loader_and_a_launch_flag_overrides_the_default():
    code = ("import argparse\nimport numpy as np\np = argparse.ArgumentParser()\n"
            "p.add_argument('--dataset', default='kolmogorov_flow')\nargs = p.parse_args()\n"
            "u = np.load(f'data/{args.dataset}.npy')\n")
    r = run("dataset", "Kolmogorov Flow", {"train.py": code})
    assert (r.status.value, where(r)) == ("pass", [("train.py", 4, "effective"), ("train.py", 6, "rule")])
    r = run("dataset", "Kolmogorov Flow", {"train.py": code, "run.sh": "python train.py --dataset darcy\n"})
    assert r.status.value == "missing" and where(r) == [("train.py", 4, "mention")]


def test_dispatch_branch_counts_only_when_it_loads():
    loads = "import numpy as np\ndef get(name):\n    if name == 'kolmogorov_flow':\n        return np.load('x.npy')\n"
    r = run("dataset", "Kolmogorov Flow", {"train.py": loads})
    assert (r.status.value, where(r)) == ("pass", [("train.py", 3, "rule")])
    names_only = "def describe(name):\n    if name == 'kolmogorov_flow':\n        return 'turbulence'\n"
    r = run("dataset", "Kolmogorov Flow", {"train.py": names_only})
    assert (r.status.value, where(r)) == ("missing", [("train.py", 2, "mention")])


def test_dataset_class_that_reads_data_passes_one_that_makes_it_up_is_a_stub():
    real = ("import numpy as np\nclass NavierStokes2DDataset:\n    def __init__(self, p):\n        self.x = np.load(p)\n"
            "ds = NavierStokes2DDataset('f.npy')\n")
    r = run("dataset", "Navier-Stokes 2D", {"train.py": real})
    assert (r.status.value, where(r)) == ("pass", [("train.py", 5, "rule")])
    fake = ("import torch\nclass NavierStokes2DDataset:\n    def __init__(self, n):\n        self.x = torch.randn(n, 64)\n"
            "ds = NavierStokes2DDataset(10)\n")
    r = run("dataset", "Navier-Stokes 2D", {"train.py": fake})
    assert (r.status.value, r.score, where(r)) == ("stub", 0.0, [("train.py", 2, "stub")])
    solver = ("import numpy as np\nclass NavierStokes2D:\n    def step(self, w):\n        return np.fft.ifft2(np.fft.fft2(w)).real\n"
              "sim = NavierStokes2D()\n")
    r = run("dataset", "Navier-Stokes 2D", {"train.py": solver})
    assert r.status.value == "missing"  # a solver is neither a load nor a made-up dataset


@pytest.mark.parametrize(
    ("expect", "code", "status"),
    [
        ("MATH", "import math\nx = math.sqrt(2.0)\n", "missing"),
        ("MATH", "from datasets import load_dataset\nds = load_dataset('math_qa')\n", "mismatch"),
        ("SL", "import numpy as np\nx = np.load('slice_0.npy')\n", "missing"),
        ("MNIST", "import numpy as np\nx = np.load('data/fashion_mnist.npy')\n", "missing"),
        ("SEVIR", "import torch\nm = torch.load('checkpoints/sevir_unet.pt')\n", "missing"),
        ("SEVIR", "import yaml\ncfg = yaml.safe_load(open('configs/sevir.yaml'))\n", "missing"),
        ("SEVIR", "def load():\n    '''Loads SEVIR.'''\n    return None\n", "missing"),
        ("SEVIR", "import numpy as np\nwith open('results/sevir.txt', 'w') as f:\n    f.write('x')\n", "missing"),
        ("SEVIR", "import numpy as np\nwith open('data/sevir.txt', 'a') as f:\n    f.write('x')\n", "missing"),
        ("CelebA", "import numpy as np\nref = np.load('stats/celeba64_inception.npy')\n", "missing"),
        ("SEVIR", "import numpy as np\nmu = np.load('data/sevir_mean_std.npz')\n", "missing"),
    ],
)
def test_dataset_names_that_do_not_load(expect, code, status):
    r = run("dataset", expect, {"train.py": code})
    assert (r.status.value, r.score) == (status, 0.0)


def test_math_module_is_no_mention_of_math_but_a_path_is():
    r = run("dataset", "MATH", {"train.py": "import math\nx = math.sqrt(2.0)\n"})
    assert (r.status.value, r.evidence) == ("missing", ())
    r = run("dataset", "MATH", {"train.py": "import torch\nm = torch.load('checkpoints/math_model.pt')\n"})
    assert (r.status.value, where(r)) == ("missing", [("train.py", 2, "mention")])


# ----- metric ---------------------------------------------------------------------------------------------------
def test_wall_clock_time_is_a_clock_difference():
    code = "import time\ndef gen(pipe):\n    t0 = time.perf_counter()\n    pipe()\n    return time.perf_counter() - t0\n"
    r = run("metric", "wall-clock time", {"gen.py": code})
    assert (r.status.value, r.score, where(r)) == ("pass", 1.0, [("gen.py", 5, "rule")])
    budget = "import time\ndef train(step, limit):\n    t0 = time.time()\n    while time.time() - t0 < limit:\n        step()\n"
    r = run("metric", "wall-clock time", {"train.py": budget})
    assert (r.status.value, r.score) == ("missing", 0.0)


def test_peak_memory_and_flops_apis():
    r = run("metric", "peak memory", {"m.py": "import torch\ndef f():\n    return torch.cuda.max_memory_allocated() / 2**30\n"})
    assert (r.status.value, where(r)) == ("pass", [("m.py", 3, "rule")])
    r = run("metric", "FLOPs", {"m.py": "from thop import profile\ndef f(m, x):\n    macs, params = profile(m, inputs=(x,))\n    return macs\n"})
    assert (r.status.value, where(r)) == ("pass", [("m.py", 3, "rule")])
    r = run("metric", "FLOPs", {"m.py": "import torch\ndef f(m, x):\n    with torch.profiler.profile() as p:\n        m(x)\n    return p\n"})
    assert (r.status.value, r.score) == ("missing", 0.0)


def test_spaced_names_find_identifiers_and_logged_keys():
    r = run("metric", "aesthetic quality", {"e.py": "import numpy as np\ndef ev(s):\n    aesthetic_quality = np.mean(s)\n    return aesthetic_quality\n"})
    assert (r.status.value, where(r)) == ("pass", [("e.py", 3, "rule")])
    r = run("metric", "temporal consistency", {"e.py": "import wandb\ndef log(v, step):\n    wandb.log({'val/temporal_consistency': v.mean()}, step=step)\n"})
    assert (r.status.value, where(r)) == ("pass", [("e.py", 3, "rule")])
    r = run("metric", "temporal consistency", {"e.py": "import wandb\ndef log(step):\n    wandb.log({'val/temporal_consistency': 1.0}, step=step)\n"})
    assert (r.status.value, r.score, where(r)) == ("stub", 0.0, [("e.py", 3, "stub")])


def test_spaced_name_in_a_docstring_is_a_mention():
    r = run("metric", "motion smoothness", {"e.py": "def ev(v):\n    '''Reports motion smoothness.'''\n    return len(v)\n"})
    assert (r.status.value, r.details["taxonomy"], where(r)) == ("missing", "mention", [("e.py", 2, "mention")])


@pytest.mark.parametrize(
    ("expect", "code"),
    [
        ("IS", "import os\ndef is_main():\n    return os.environ.get('RANK') == '0'\nif __name__ == '__main__':\n    print(is_main())\n"),
        ("mAP", "import torch\ndef map_labels(y):\n    return y.long() + 1\nif __name__ == '__main__':\n    print(map_labels(torch.zeros(2)))\n"),
        ("SL", "import torch\ndef f(x):\n    sliced = x[slice(0, 2)] * 2\n    return sliced\n"),
    ],
)
def test_everyday_identifier_pieces_are_not_metrics(expect, code):
    r = run("metric", expect, {"train.py": code})
    assert (r.status.value, r.score, r.evidence) == ("missing", 0.0, ())


def test_settings_named_after_a_metric_are_not_its_value():
    code = ("import wandb\nNUM_FID_SAMPLES = 50000\nFID_EVERY = 10\ndef log(w, step):\n"
            "    wandb.log({'fid_weight': w * 2}, step=step)\n")
    r = run("metric", "FID", {"train.py": code})
    assert (r.status.value, r.score, r.details["taxonomy"]) == ("missing", 0.0, "mention")


def test_correlations_and_library_mse():
    r = run("metric", "Spearman correlation", {"e.py": "from scipy.stats import spearmanr\ndef ev(a, b):\n    return spearmanr(a, b)[0]\n"})
    assert (r.status.value, where(r)) == ("pass", [("e.py", 3, "rule")])
    r = run("metric", "MSE", {"e.py": "import torch.nn.functional as F\ndef ev(p, y):\n    test_mse = F.mse_loss(p, y)\n    return test_mse\n"})
    assert (r.status.value, where(r)) == ("pass", [("e.py", 3, "rule")])


def test_a_leading_dimension_may_trail_in_code():
    files = {
        "train.py": 'import numpy as np\n\nDATA = "data/navier_stokes_1d.npy"\n\n\ndef load():\n    return np.load(DATA)\n',
    }
    result = run("dataset", "1D Navier-Stokes", files)
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert where(result) == [("train.py", 7, "rule")]
    other = run("dataset", "1D Navier-Stokes", {"train.py": files["train.py"].replace("navier_stokes", "burgers")})
    assert other.status.value == "missing"
