"""Regenerate docs/rules/JFxxx.md from the rules' docstrings: `python scripts/rule_docs.py`."""

from jaxfix import ruledocs

if __name__ == "__main__":
    for path in ruledocs.write():
        print(f"wrote {path}")
