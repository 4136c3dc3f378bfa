"""One module per dialect: parse, validate, resolve to a Meaning, and emit from a Meaning.

registry.py names them (its order is /v1/dialects'); base.py is the Dialect interface; spec_base.py holds the
pieces every wire spec model is built from. Imported by the service modules (app.service.specs, app.service.translate,
app.service.execute, app.service.capabilities), scan, lint, diff, fix, the API and the CLI. A dialect module imports core, app.core.drift,
the engine plumbing (app.engines.extras, app.engines.config, app.engines.native, app.dialects.kit.runtime_support) and other dialect modules,
never a layer above it (tests/test_architecture.py)."""
