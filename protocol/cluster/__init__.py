"""Matches and self-play across machines on Ray (the optional ``damka[cluster]`` extra).

``connect`` opens the cluster named by ``--cluster``; ``Farm`` hands units of work (a game)
to long-lived actors, one per game slot on each worker machine, and streams their results
back to the coordinator, which alone writes files. Ray is imported only when a command asks
for a cluster, so damka works without it.
"""
