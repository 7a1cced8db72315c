"""A small PPO-style training repo written into a temp folder, for CLI, batch, baseline and mutate tests."""

from __future__ import annotations

from pathlib import Path

TRAIN = '''\
"""Train a small policy with PPO (argparse entry point)."""
import argparse

import torch
from torch import nn


def build_parser():
    parser = argparse.ArgumentParser(description="PPO training")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--clip-range", type=float, default=0.2)
    parser.add_argument("--gamma", type=float, default=0.99)
    return parser


class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, act_dim))

    def forward(self, obs):
        return self.net(obs)


def discounted_returns(rewards, gamma):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return list(reversed(out))


def main():
    args = build_parser().parse_args()
    policy = Policy(8, 2)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
    returns = discounted_returns([1.0, 0.0, 1.0], args.gamma)
    ratio = torch.clamp(torch.ones(3), 1 - args.clip_range, 1 + args.clip_range)
    print(len(returns), optimizer, ratio)


if __name__ == "__main__":
    main()
'''

SPEC = '''\
version: 1
paper: {id: mini-ppo, title: Mini PPO}
saus:
  - id: mini-D1-001
    dimension: D1
    claim: Adam with learning rate 3e-4.
    check: {kind: value, name: learning_rate, expect: 3.0e-4}
  - id: mini-D1-002
    dimension: D1
    claim: The clipping parameter epsilon is 0.2.
    check: {kind: value, name: clip_range, expect: 0.2}
  - id: mini-D1-003
    dimension: D1
    claim: Discount factor 0.99.
    check: {kind: value, name: gamma, expect: 0.99}
  - id: mini-D2-001
    dimension: D2
    claim: The policy is optimised with Adam.
    check: {kind: call, target: torch.optim.Adam}
'''


def write_repo(root: Path, train: str = TRAIN, spec: str = SPEC) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(train, encoding="utf-8")
    (root / "sau.yaml").write_text(spec, encoding="utf-8")
    return root


def make_repo(tmp_path: Path, files: dict[str, str], saus: list[dict], pin: dict | None = None) -> Path:
    """``tmp_path/repo`` with the given files (dedented) and a ``sau.yaml`` of these SAUs: a check's own repo."""
    import yaml
    from textwrap import dedent

    repo = tmp_path / "repo"
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    spec = {"version": 1, "paper": {"id": "t"}, "saus": saus}
    if pin:
        spec["pin"] = pin
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return repo
