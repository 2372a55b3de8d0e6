"""Evaluation of the product's claims (seed §9), runnable with one command each.

- ``metrics``: classification figures (per-tag precision, recall, F1, macro/micro F1, confusion
  matrix, recall@k) and segmentation figures (Pk, WindowDiff) with their baselines;
- ``dataset``: the tagging datasets (``datasets/{version}/{split}/``);
- ``tagging``: ``eval tagging DIR``: the configured tagging engine on a dataset, in a fresh index;
- ``train_tagging``: ``python -m shared.eval.train_tagging``: the offline tagger's pair model
  trained on independent sources; ``tagging_loso``: ``eval tagging DIR --leave-one-source-out``;
- ``calibrate``: the grid search behind the embedder-specific threshold profiles (dev split only);
- ``segmentation``: ``eval segmentation [GOLD]``: Pk / WindowDiff of the configured segmenter on
  the AMI meetings, beside an even split and TextTiling;
- ``quality``: ``eval judge RUN_ID``: model-free story checks (AQUSA-style, ``checks``) and the
  LLM judge;
- ``report``: tables for the terminal and the confusion-matrix PNG.

Evaluation jobs run ad hoc: no Langfuse spans (seed §12), results go to ``eval/{id}/`` in the
artifact store and, with ``--out``, to a local folder.
"""
