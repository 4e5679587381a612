"""Named instances from the papers, the seeded experiment runner, sweeps, results, plots.

* :func:`run_many` / :func:`run_once`: seeded runs of one solver on one named instance
  (the ``combex run`` document);
* :class:`Sweep` / :func:`run_sweep`: solvers x instances x parameter grid x seeds, on one
  process, local processes or a Dask cluster, written to a tidy, resumable results file
  (:func:`results_table` reads it into pandas);
* :func:`run_study` / :func:`save_study` / :func:`load_study`: a simulated study that is
  saved every few batches and resumed exactly after a crash;
* plots: :func:`plot_results`, :func:`plot_time_per_round`, :func:`plot_traces`,
  :func:`plot_regret`.
"""

from ._backends import BACKENDS, execute, limit_blas_threads
from ._instances import (INSTANCES, check_instance_params, get_instance, list_instances, make_instance,
                         register_instance)
from ._plots import plot_regret, plot_results, plot_time_per_round, plot_traces, summarize_table
from ._runner import (RunTask, build_solver, execute_task, run_generators, run_many, run_once,
                      run_seed_sequence, simulate, summarize)
from ._study import environment_state, load_study, restore_environment_state, run_study, save_study
from ._sweep import (REGRET_COLUMNS, RESULT_COLUMNS, ConfigError, ResultsFileError, Sweep, SweepReport,
                     load_config, read_results, results_table, run_sweep, sweep_from_lists)

# The user's vocabulary; the other names imported above are plumbing shared with the CLI
# and the backends (importable, not advertised).
__all__ = [
    "INSTANCES", "get_instance", "list_instances", "make_instance", "register_instance",
    "run_many", "run_once", "simulate", "summarize",
    "Sweep", "SweepReport", "run_sweep", "sweep_from_lists", "load_config", "read_results", "results_table",
    "ConfigError", "ResultsFileError", "RESULT_COLUMNS", "REGRET_COLUMNS",
    "run_study", "save_study", "load_study",
    "plot_results", "plot_regret", "plot_time_per_round", "plot_traces", "summarize_table",
    "BACKENDS",
]
