"""Text before anything reads it: engine-independent helpers every phase shares.

- ``textio``: uploads to normalized text, and spans (lines, sentences, speakers) with offsets
- ``hygiene``: the hygiene gate (secrets redacted, instruction-like text flagged), ``scrub``
- ``secrets``: secrets found and redacted with placeholders that keep every offset
- ``instructions``: instruction-like spans (prompt injection) found with their offsets
- ``language``: content words, lemmas, keyphrases and the cues that say what a sentence is
- ``tokens``: token counting that works offline
"""
