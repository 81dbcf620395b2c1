"""The model report and the card report: one builder each, one data object, rendered as a
terminal table (cli/render.py), JSON (serialize.py) or HTML (web/)."""
