"""Environments: who answers a pull, and the instances of the papers.

``pull(arm, count) -> (reward_sum, count)`` draws the sum of ``count`` i.i.d. rewards
exactly in distribution in one call; ``pull_many(arms, counts)`` does it for many arms at
once (vectorized).

Simulated: :class:`GaussianArms`, :class:`BernoulliArms` (index arms),
:class:`FullBandit` (super-arm masks, full-bandit feedback), :class:`LinearBandit`
(feature rows), :class:`RewardLists` / :class:`BinaryRewardLists` (finite reward lists).
Data-backed: :class:`CrowdQuiz` (teams of quiz workers, Li et al. 2017, data shipped in
:mod:`combex.datasets`).

Instances of the papers: full bandit (Kuroki et al.) :func:`kuroki_synthetic`,
:func:`topk_gaussian`, :func:`crowd`; Best-K (Jiang et al.) :func:`jiang_1sparse`,
:func:`jiang_exponential`, :func:`lil_exponential`; linear (Xu et al.) :func:`soare`,
:func:`canonical`, :func:`diabetes_linear`, :func:`wine_linear`, :func:`real_linear`; MIPS
and sublinear bandits :func:`mips_gaussian`, :func:`mips_uniform`,
:func:`mips_adversarial`, :func:`sublinear_synthetic`, :func:`wine_dynamic`.
"""


from ._base import Environment, NoiseModel, Problem
from ._crowd import CROWD_DATASETS, CrowdData, CrowdQuiz, load_crowd_quiz
from ._instances_full import crowd, kuroki_synthetic, kuroki_synthetic_means, topk_gaussian
from ._instances_linear import LinearInstance, canonical, diabetes_linear, real_linear, soare, wine_linear
from ._instances_semi import (
    BestKGaussianArms,
    jiang_1sparse,
    jiang_1sparse_means,
    jiang_exponential,
    jiang_exponential_means,
    lil_exponential,
    lil_exponential_means,
)
from ._linear import LinearBandit
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
from ._simulated import BernoulliArms, FullBandit, GaussianArms

__all__ = [
    # contract
    "Environment",
    "NoiseModel",
    "Problem",
    # simulators
    "GaussianArms",
    "BernoulliArms",
    "FullBandit",
    "LinearBandit",
    "LinearInstance",
    "RewardLists",
    "BinaryRewardLists",
    "BestKGaussianArms",
    "DynamicLinearArms",
    # real data
    "CrowdQuiz",
    "CrowdData",
    "load_crowd_quiz",
    "CROWD_DATASETS",
    # instances of the papers
    "kuroki_synthetic",
    "kuroki_synthetic_means",
    "topk_gaussian",
    "crowd",
    "jiang_1sparse",
    "jiang_1sparse_means",
    "jiang_exponential",
    "jiang_exponential_means",
    "lil_exponential",
    "lil_exponential_means",
    "soare",
    "canonical",
    "diabetes_linear",
    "wine_linear",
    "real_linear",
    "MIPSData",
    "mips_gaussian",
    "mips_uniform",
    "mips_adversarial",
    "mips_gaussian_env",
    "mips_uniform_env",
    "mips_adversarial_env",
    "sublinear_synthetic",
    "wine_dynamic",
]
