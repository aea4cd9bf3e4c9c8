"""Level-triggered controllers: given a key, recompute from current truth and mend.

One reconciler per invariant. Each finds its keys from a fresh snapshot (the
invariant's own violations), re-reads the truth for each key under the locks
of rule 4, and acts only if the disagreement still holds. An event only says
which key to look at; the truth decides what to do.
"""
