"""Rule ``augmentation`` on small repos (verdict, score, evidence line) and the claim phrases compiled to it."""

from __future__ import annotations

import textwrap

import pytest

from verifier.analysis.protocol import validate_protocol_params
from verifier.analysis.protocol.examples import run_example
from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def run(code: str, expect, dataset: str | None = None, files: dict[str, str] | None = None):
    params = {"expect": expect, **({"dataset": dataset} if dataset else {})}
    assert validate_protocol_params("augmentation", params) is None
    example = {"code": textwrap.dedent(code), "files": files or {}, "params": params}
    result, _ = run_example("augmentation", example)
    return result


def lines(result) -> list[tuple[str, int]]:
    return sorted((e.file, e.line) for e in result.evidence)


KERAS_GENERATOR = """
    from tensorflow.keras.preprocessing.image import ImageDataGenerator

    train_gen = ImageDataGenerator(rescale=1.0 / 255, horizontal_flip=True, rotation_range=15)
    test_gen = ImageDataGenerator(rescale=1.0 / 255)
"""


def test_keras_image_data_generator_flags():
    result = run(KERAS_GENERATOR, ["horizontal_flip", "rotation"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 4)]
    flagged = run(KERAS_GENERATOR, "none")
    assert (flagged.status.value, flagged.score) == ("mismatch", 0.0)
    assert ("train.py", 4) in lines(flagged) and ("train.py", 5) not in lines(flagged)


def test_tf_image_random_ops_in_the_training_map():
    code = """
        import tensorflow as tf

        def augment_train(image, label):
            image = tf.image.random_flip_left_right(image)
            image = tf.image.random_brightness(image, 0.2)
            return image, label

        def preprocess_eval(image, label):
            return tf.image.resize(image, (224, 224)), label
    """
    result = run(code, ["horizontal_flip", "vertical_flip"])
    assert (result.status.value, result.score) == ("partial", 0.5)
    assert lines(result) == [("train.py", 5)]


def test_torchvision_v2_mixup_and_cutmix():
    code = """
        from torchvision.transforms import v2

        cutmix_or_mixup = v2.RandomChoice([v2.CutMix(num_classes=100), v2.MixUp(num_classes=100)])
    """
    result = run(code, ["mixup", "cutmix"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert set(lines(result)) == {("train.py", 4)}


def test_timm_mixup_with_cutmix_off_is_only_mixup():
    code = """
        from timm.data import Mixup

        mixup_fn = Mixup(mixup_alpha=0.8, cutmix_alpha=0.0, num_classes=1000)
    """
    assert run(code, "mixup").status.value == "pass"
    result = run(code, ["mixup", "cutmix"])
    assert (result.status.value, result.score) == ("partial", 0.5)
    assert lines(result) == [("train.py", 4)]


def test_timm_eval_transform_and_no_aug_are_preprocessing():
    code = """
        from timm.data import create_transform

        train_tf = create_transform(224, is_training=True, no_aug=True)
        eval_tf = create_transform(224, is_training=False)
    """
    result = run(code, "none")
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert ("train.py", 4) in lines(result)


def test_eval_only_flip_and_dict_of_splits():
    """A flip in the test pipeline is not training augmentation; the dict key says which split."""
    code = """
        from torchvision import transforms

        data_transforms = {
            "train": transforms.Compose([transforms.Resize(256), transforms.ToTensor()]),
            "val": transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor()]),
        }
    """
    result = run(code, "horizontal_flip")
    assert (result.status.value, result.score) == ("missing", 0.0)
    assert ("train.py", 5) in lines(result) and ("train.py", 6) not in lines(result)


def test_deterministic_flip_is_not_augmentation_but_a_random_one_is():
    deterministic = """
        import torch

        def mirror_pairs(x):
            return torch.cat([x, torch.flip(x, dims=[3])])
    """
    assert run(deterministic, "horizontal_flip").status.value == "unverified"  # no pipeline in sight
    random_where = """
        import torch

        def train_step(model, x, y):
            x = torch.where(torch.rand(x.shape[0], 1, 1, 1) < 0.5, x.flip(3), x)
            return model(x), y
    """
    result = run(random_where, "horizontal_flip")
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 5)]


def test_a_setting_decides_or_leaves_it_undecided():
    code = """
        import argparse
        from torchvision import transforms

        parser = argparse.ArgumentParser()
        parser.add_argument("--hflip", action="store_true", default=False)
        args = parser.parse_args()
        ops = [transforms.ToTensor()]
        if args.hflip:
            ops.append(transforms.RandomHorizontalFlip())
        train_transform = transforms.Compose(ops)
    """
    off = run(code, "none")
    assert (off.status.value, off.score) == ("pass", 1.0)
    launched = run(code, "none", files={"run.sh": "python train.py --hflip 1\n"})
    assert (launched.status.value, launched.score) == ("mismatch", 0.0)
    assert lines(launched) == [("train.py", 10)]
    unknown = code.replace('        parser.add_argument("--hflip", action="store_true", default=False)\n', "")
    assert unknown != code
    undecided = run(unknown, "none")
    assert undecided.status.value == "unverified" and undecided.score is None
    assert lines(undecided) == [("train.py", 9)]


def test_a_local_class_with_a_library_name_is_undecided():
    code = """
        from my_transforms import RandomHorizontalFlip, Compose

        train_transform = Compose([RandomHorizontalFlip()])
    """
    result = run(code, "none")
    assert result.status.value == "unverified"
    assert lines(result) == [("train.py", 4)]


def test_dataset_selects_its_own_pipeline():
    files = {
        "data/cifar100.py": textwrap.dedent("""
            from torchvision import transforms

            def get_cifar100():
                return transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor()])
        """),
        "data/svhn.py": textwrap.dedent("""
            from torchvision import transforms

            def get_svhn():
                return transforms.Compose([transforms.ToTensor()])
        """),
    }
    svhn = run("import torch\n", "none", dataset="SVHN", files=files)
    assert (svhn.status.value, svhn.score) == ("pass", 1.0)
    assert lines(svhn) == [("data/svhn.py", 5)]
    cifar = run("import torch\n", "none", dataset="CIFAR-100", files=files)
    assert (cifar.status.value, cifar.score) == ("mismatch", 0.0)
    assert lines(cifar) == [("data/cifar100.py", 5)]
    anywhere = run("import torch\n", "horizontal_flip", files=files)
    assert anywhere.status.value == "pass"


def test_dataset_branch():
    code = """
        from torchvision import transforms

        def build(dataset_name):
            if "cifar" in dataset_name:
                return transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])
            return transforms.Compose([transforms.ToTensor()])
    """
    mnist = run(code, "none", dataset="MNIST")
    assert (mnist.status.value, mnist.score) == ("pass", 1.0)
    assert lines(mnist) == [("train.py", 7)]
    cifar = run(code, "random_crop", dataset="CIFAR10")
    assert (cifar.status.value, cifar.score) == ("pass", 1.0)
    assert lines(cifar) == [("train.py", 6)]


def test_unknown_augmentation_name_is_unverified_and_params_are_typed():
    assert run("from torchvision import transforms\nt = transforms.ToTensor()\n", "warp-drive").status.value == "unverified"
    assert validate_protocol_params("augmentation", {}) is not None
    assert validate_protocol_params("augmentation", {"expect": 3}) is not None
    assert validate_protocol_params("augmentation", {"expect": "none", "mode": "x"}) is not None


# ----- the claim compiler ---------------------------------------------------------------------------------------
def augmentation_checks(claim: str, dimension: str = "protocol") -> list[dict]:
    compiled = compile_claim(SAU(id="aug-D3-001", dimension=dimension, claim=claim))
    return [c.params for c in compiled.checks if c.kind == "protocol" and c.rule == "augmentation"]


@pytest.mark.parametrize(
    ("claim", "dimension", "want"),
    [
        ("We train without data augmentation.", "protocol", [{"expect": "none"}]),
        ("Training recipe: SGD with momentum 0.9, no augmentation, 100 epochs.", "numerical", [{"expect": "none"}]),
        ("Images are augmented with random crops and horizontal flips on CIFAR-10.", "protocol",
         [{"expect": ["horizontal_flip", "random_crop"], "dataset": "CIFAR10"}]),
        ("Fine-tuning uses strong augmentation (RandAugment).", "protocol", [{"expect": ["randaugment"]}]),
        ("Regularisation: Mixup and CutMix on every batch.", "protocol", [{"expect": ["cutmix", "mixup"]}]),
        ("Aerial scenes use horizontal+vertical flips.", "protocol", [{"expect": ["horizontal_flip", "vertical_flip"]}]),
    ],
)
def test_compiled_augmentation_checks(claim, dimension, want):
    assert augmentation_checks(claim, dimension) == want


@pytest.mark.parametrize(
    "claim",
    [
        "Training uses strong augmentation.",  # which augmentations is not said
        "Training uses strong data augmentation (XYZ).",
        "We compare no augmentation vs. random resized crops on five datasets.",  # an ablation runs both
        "We train without Mixup.",
        "CutMix α = 0 in all runs.",
        "Mixup α = 0.8 and CutMix α = 1.0.",  # the parameters' value checks say it
        "Horizontal flips and random crops on CIFAR-10 and SVHN.",  # one check per dataset is not read here
    ],
)
def test_phrases_left_to_the_judge(claim):
    assert augmentation_checks(claim) == []


def test_a_fragment_naming_two_datasets_is_left_but_its_neighbour_is_typed():
    claim = "Horizontal flips on CIFAR-10 and SVHN, no augmentation on MNIST."
    assert augmentation_checks(claim) == [{"expect": "none", "dataset": "MNIST"}]


def test_per_dataset_fragments_take_their_dataset():
    claim = "Datasets: CIFAR-100 (50K train, horizontal_flip), SVHN (73K train, no augmentation)"
    assert augmentation_checks(claim, "numerical") == [
        {"expect": ["horizontal_flip"], "dataset": "CIFAR100"},
        {"expect": "none", "dataset": "SVHN"},
    ]


def test_methodological_claims_do_not_emit_it():
    assert augmentation_checks("Mixup: x = lam * x_i + (1 - lam) * x_j with lam drawn from Beta(alpha, alpha).",
                               "methodological") == []


def test_the_main_guard_is_not_a_setting():
    code = """
        from torchvision import transforms

        if __name__ == "__main__":
            train_transform = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    """
    result = run(code, "none")
    assert (result.status.value, result.score) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 5)]


def test_random_crop_is_met_by_a_random_resized_crop_but_not_the_reverse():
    code = """
        from torchvision import transforms

        train_transform = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    """
    assert run(code, "random_crop").status.value == "pass"
    plain = code.replace("RandomResizedCrop(224)", "RandomCrop(224)")
    result = run(plain, "random_resized_crop")
    assert (result.status.value, result.score) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 4)]


def test_every_compiled_kind_is_one_the_rule_knows():
    from verifier.analysis.protocol import load_rule
    from verifier.analysis.protocol.augmentation import expected_kinds
    from verifier.compiler import terms

    rule = load_rule("augmentation")
    for phrase, kinds in terms.protocol_mapping_lists("augmentation").items():
        expect = "none" if kinds == ["none"] else kinds
        assert expected_kinds(expect, rule) == ([] if kinds == ["none"] else kinds), phrase


def test_a_crop_size_keeps_the_crop_and_a_swept_mixup_is_its_value_check():
    assert augmentation_checks("Data augmentation: random resized crop of 224 pixels, horizontal flip with "
                               "probability 0.5.", "numerical") == [
        {"expect": ["random_resized_crop"]}, {"expect": ["horizontal_flip"]}]
    assert augmentation_checks("We train with Mixup α ∈ {0.2, 0.8} on all runs", "numerical") == []
