"""The engine plumbing: the engine registry, a module per engine behind one interface, and the one parser of engine
names (runtimes), which optional engine extras are installed (extras), how every engine run is configured and
the host facts its answers depend on (config), the sandbox that runs native code on untrusted bytes in a child
process (sandbox, sandbox_child, native), and the virtual environments clipbridge builds once and caches for an
engine or converter that cannot share its own (venvs: fleet's pinned engines, the chain's LiteRT converter).

Imports only core and itself (tests/test_architecture.py). Imported by the dialects (their engine backends), the
service, scan, lint, diff, fix, fleet, the chain and the API; never by core, the kernels or the dialect kit.
"""
