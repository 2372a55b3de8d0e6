"""Stand-in servers over real HTTP for tests and benchmarks: an OpenAI-compatible server
(``openai_standin``) and a fake Azure DevOps REST 7.1 server (``fake_ado``).

They live outside ``tests/`` because the benchmarks (``benchmarks/``) run them too; helpers that only
tests use stay in ``tests/support/``. Import the modules themselves (``from
devhost.standins.openai_standin import OpenAIStandIn``): this package imports nothing on its own.
"""
