"""Where the larger data sets live: moved to :mod:`combex.datasets` (kept for imports).

The small data sets the environments need (quiz, wine quality, diabetes) are shipped in
:mod:`combex.datasets`; :func:`data_dir` / :func:`dataset_path` (``COMBEX_DATA``) are only
needed for a copy of your own (``data_dir=...``) and for the larger crowd sets.
"""

from __future__ import annotations

from ..datasets._home import ENV_VAR, data_dir, dataset_path

__all__ = ["data_dir", "dataset_path", "ENV_VAR"]
