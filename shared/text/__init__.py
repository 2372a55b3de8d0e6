"""Text before anything reads it: engine-independent helpers every phase shares.

- ``textio``: uploads to normalized text, and spans (lines, sentences, speakers) with offsets
- ``hygiene``: the hygiene gate (secrets redacted, instruction-like text flagged), ``scrub``
- ``tokens``: token counting that works offline
"""
