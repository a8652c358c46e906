"""Regenerate docs/rules/JFxxx.md from the rules' docstrings, and the table of rules in docs/rules.md:
`python scripts/rule_docs.py`."""

from jaxfix import ruledocs

if __name__ == "__main__":
    for path in ruledocs.write():
        print(f"wrote {path}")
    if ruledocs.write_table():
        print(f"wrote {ruledocs.INDEX}")
