"""The live battery: cases as data, driven through the real Cortex language server as an editor does.

``python -m evals --backend embedded|ollama|openai --model NAME --out evals/results/<model>-<date>.md``
"""
