"""The web site (FastAPI + Jinja2) in English, Spanish and Dutch, its JSON API and static export."""
from __future__ import annotations
