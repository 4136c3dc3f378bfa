"""Follow a model across converters (docs/chain.md): a torch `ExportedProgram` (or an ONNX model) converted stage by
stage (torch -> onnx -> openvino, torch -> tflite, torch -> coreml), each stage run on its engine, every hop
compared against the source and against the stage it was converted from, and each changed clamp named by the
converter lowering rule that changed it (`lowering.py`), predicted statically before anything runs.

Lives here: the stage list (`stages`), the sandbox-side converters and engine runs (`child_torch`, `child_engines`),
the LiteRT converter's environment of its own and the script it runs (`converter_env`, `litert_convert`:
litert-torch cannot share clipbridge's environment) and the .tflite graph reader (`litert_graph`), the static
lowering reader and its rules (`lowering`, `rules`), the hop comparison (`hops`), the report (`report`), its
pydantic model (`models`) and its findings view for the CI formats (`formats`, written by clipbridge.reports). It
uses clipbridge.diff's public pieces (the ONNX engine runs, tolerances, generated specials) and the engines'
sandbox; it is not inside diff. Imported only by the top (the API and the CLI); it never imports them
(tests/test_architecture.py).
"""
