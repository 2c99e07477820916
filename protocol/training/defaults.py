"""What ``damka selfplay`` and ``damka tune`` assume when not told, and how data names a rule
set (``variant_label``, the command line's own, re-exported). Imported by the command line and
by the code behind it alike, so it imports nothing of this package and nothing heavy."""

from __future__ import annotations

from protocol.args import variant_label

__all__ = ["DEFAULT_NODES", "DEFAULT_RANDOM_PLIES", "DEFAULT_MAX_PLIES", "DEFAULT_HASH_MB",
           "DEFAULT_SEED", "DEFAULT_L2", "DEFAULT_MIN_COUNT", "DEFAULT_PATIENCE",
           "DEFAULT_EPOCHS", "DEFAULT_VALIDATION", "DEFAULT_SPSA_NODES", "DEFAULT_R_END",
           "variant_label"]

#: damka selfplay: nodes per move, random opening plies, the adjudication cap, hash per worker
DEFAULT_NODES = 4000
DEFAULT_RANDOM_PLIES = 8
DEFAULT_MAX_PLIES = 400
DEFAULT_HASH_MB = 8
#: damka selfplay: the seed of the random openings; damka tune: the seed of the validation split
DEFAULT_SEED = 1
#: damka tune: the L2 prior (a Gaussian with a standard deviation of 0.22 man), and the
#: fewest training positions a weight's feature must occur in to be fitted
DEFAULT_L2 = 10.0
DEFAULT_MIN_COUNT = 10
#: damka tune: iterations without a better validation loss before the fit stops, the most
#: iterations a fit takes, and the share of the games held out for validation
DEFAULT_PATIENCE = 10
DEFAULT_EPOCHS = 300
DEFAULT_VALIDATION = 0.1
#: damka spsa: nodes per move (the data runs' budget: about three game pairs a second on two
#: cores for international), and a knob's move per game won at the last iteration, in its
#: steps (the Stockfish testing framework's usual value)
DEFAULT_SPSA_NODES = 16000
DEFAULT_R_END = 0.002
