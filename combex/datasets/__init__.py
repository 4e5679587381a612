"""Real data sets for combex studies, with their provenance (like ``sklearn.datasets``).

Shipped inside the package (no download, no data folder):

* :func:`load_quiz` -- the six quiz domains of Li, Baba & Kashima (CIKM 2017), where every
  worker answered every question (team selection; CC BY 4.0);
* :func:`load_wine_quality` -- the UCI wine-quality data of Cortez et al. (2009)
  (linear bandits; CC BY 4.0);
* :func:`load_diabetes` -- the diabetes data of Efron et al. (2004), as scikit-learn ships
  it (linear bandits).

Not shipped (larger, or no licence that allows it): :func:`load_crowd_labels` reads the
crowd-labelling sets of :data:`CROWD_LABEL_SETS` (Snow et al. 2008, Zheng et al. 2017,
Zhang et al. 2014, Ipeirotis et al. 2010) from ``COMBEX_DATA``, and downloads with
checksums the ones whose licence allows it. :func:`provenance` prints where a packaged
set comes from and how to cite it.
"""


from ._crowd_labels import CROWD_LABEL_SETS, CrowdLabels, CrowdLabelSet, load_crowd_labels
from ._home import data_dir, dataset_path
from ._packaged import (
    QUIZ_DOMAINS,
    QuizData,
    TabularData,
    load_diabetes,
    load_quiz,
    load_wine_quality,
    provenance,
)

__all__ = [
    "load_quiz",
    "load_wine_quality",
    "load_diabetes",
    "load_crowd_labels",
    "provenance",
    "QuizData",
    "TabularData",
    "CrowdLabels",
    "CrowdLabelSet",
    "QUIZ_DOMAINS",
    "CROWD_LABEL_SETS",
    "data_dir",
    "dataset_path",
]
