"""Environments: who answers a pull.

``pull(arm, count) -> (reward_sum, count)`` draws the sum of ``count`` i.i.d. rewards
exactly in distribution in one call; ``pull_many(arms, counts)`` does it for many arms at
once (vectorized).

Simulated: :class:`GaussianArms`, :class:`BernoulliArms` (index arms),
:class:`FullBandit` (super-arm masks, full-bandit feedback), :class:`LinearBandit`
(feature rows). Data-backed: :class:`CrowdQuiz` (teams of quiz workers, Li et al. 2017,
data shipped in :mod:`combex.datasets`).
"""

from __future__ import annotations

from ._base import Environment, NoiseModel, Problem
from ._crowd import CROWD_DATASETS, CrowdData, CrowdQuiz, load_crowd_quiz
from ._data import data_dir, dataset_path
from ._linear import LinearBandit
from ._simulated import BernoulliArms, FullBandit, GaussianArms

from ._lists import BinaryRewardLists, RewardLists
from ._mips_instances import (
    DynamicLinearArms,
    MIPSData,
    mips_adversarial,
    mips_adversarial_env,
    mips_gaussian,
    mips_gaussian_env,
    mips_uniform,
    mips_uniform_env,
    sublinear_synthetic,
    wine_dynamic,
)

__all__ = [
    "Environment",
    "NoiseModel",
    "Problem",
    "GaussianArms",
    "BernoulliArms",
    "FullBandit",
    "LinearBandit",
    "RewardLists",
    "BinaryRewardLists",
    "CrowdQuiz",
    "CrowdData",
    "load_crowd_quiz",
    "CROWD_DATASETS",
    "data_dir",
    "dataset_path",
    "MIPSData",
    "mips_gaussian",
    "mips_uniform",
    "mips_adversarial",
    "mips_gaussian_env",
    "mips_uniform_env",
    "mips_adversarial_env",
    "DynamicLinearArms",
    "sublinear_synthetic",
    "wine_dynamic",
]
