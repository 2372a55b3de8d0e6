"""Statement analysis the pipeline runs whatever the engine: which sentences ask for something, and
how two statements relate. The offline engine builds on it; nothing here imports an engine.

- ``capture``: the requirement classifier (``assets/capture_model.json``): the statements a run's
  coverage counts, and the offline generator's needs
- ``contradiction``: contradiction cues between two requirement texts (numbers, negation, modals,
  quantifiers, antonyms) and limit checks against constraints
- ``magnitudes``: numbers and units as formal requirements write them, and requirements left
  optional (the tagging pair model's features)
- ``revision``: a later statement that changes an earlier one (the decision revised in the meeting)
"""
