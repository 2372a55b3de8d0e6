"""A completed run as a reviewer sees it, edits it and takes it away.

- ``bundle``: the review page's JSON document for one run (``GET /api/runs/{run_id}/review``)
- ``state``: the saved review (edits and decisions): its rules, its checks, saved versioned
- ``edits``: a saved review applied to the run's backlog and tagging
- ``tree``: the merged backlog as a tree (epic → feature → story), as JSON and as text
- ``export``: the reviewed backlog as a CSV for Azure DevOps' import, or as Markdown
"""
