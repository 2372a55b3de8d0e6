"""Small transcripts for pipeline tests (the real samples are in samples/)."""

SMALL = """Product Owner: Welcome everyone, let's talk about the remote.

Marketing: The remote must have fewer than ten buttons. It should glow in the dark.
Designer: Yeah. The case should be made of recycled plastic.

Engineer: The battery must last at least twelve months. We should support speech recognition.
Project Manager: Okay, see you next week.
"""
