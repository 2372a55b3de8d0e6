"""The reviewed backlog: the reviewer's saved edits and decisions, applying them, and what the
reviewed backlog becomes in Azure DevOps. Below the pipeline, the index and the writer that use it.

- ``state``: the saved review (edits and decisions): its rules, its checks, saved versioned
- ``edits``: a saved review applied to the run's backlog and tagging
- ``tree``: the merged backlog as a tree (epic → feature → story), as JSON and as text
- ``plan``: what writing the reviewed backlog would do, item by item (the decisions' rules)
- ``render``: its ADO form: escaping, HTML fields, tags and signatures
"""
