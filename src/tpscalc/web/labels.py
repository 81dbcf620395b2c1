"""Words shown for codes (fit, confidence, bound) and the grouping of Epoch AI's record fields."""
from __future__ import annotations


def N_(message: str) -> str:
    """Mark `message` for extraction; it is translated where it is shown."""
    return message


LANGUAGE_NAMES = {"en": "English", "es": "Español", "nl": "Nederlands"}  # each in its own language

LABELS: dict[str, str] = {
    "comfortable": N_("Comfortable"),
    "tight": N_("Tight"),
    "no": N_("Does not fit"),
    "offload": N_("Offload"),
    "cpu": N_("CPU only"),
    "high": N_("high confidence"),
    "medium": N_("medium confidence"),
    "low": N_("low confidence"),
    "bandwidth": N_("memory-bandwidth bound"),
    "compute": N_("compute bound"),
    "overhead": N_("per-token overhead bound"),
    "ram_bandwidth": N_("system-RAM bandwidth bound"),
    "pcie": N_("PCIe bound"),
    "speed": N_("speed"),
    "size": N_("size"),
    "date": N_("date"),
}

# Fit words the report builder translates with gettext(variable) (Estimate.fit values); the
# record's section titles and field labels are collected from tpscalc.report.record by
# tpscalc.web.translations when it extracts messages.
REPORT_WORDS = (N_("comfortable"), N_("tight"), N_("no"))
