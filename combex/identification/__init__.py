"""The theory of an identification problem: answers, lower bounds and thresholds."""
