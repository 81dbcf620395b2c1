"""Words shown for codes (fit, confidence, bound) and the grouping of Epoch AI's record fields."""
from __future__ import annotations

from tpscalc.report.common import FIT_LABELS


def N_(message: str) -> str:
    """Mark `message` for extraction; it is translated where it is shown."""
    return message


LANGUAGE_NAMES = {"en": "English", "es": "Español", "nl": "Nederlands"}  # each in its own language

LABELS: dict[str, str] = {
    **FIT_LABELS,
    "high": N_("high confidence"),
    "medium": N_("medium confidence"),
    "low": N_("low confidence"),
    "bandwidth": N_("memory-bandwidth bound"),
    "compute": N_("compute bound"),
    "overhead": N_("per-token overhead bound"),
    "ram_bandwidth": N_("system-RAM bandwidth bound"),
    "pcie": N_("PCIe bound"),
    "cpu_fabric": N_("CPU read-bandwidth bound"),
    "cpu_compute": N_("CPU compute bound"),
    "storage": N_("storage-read bound"),
    "speed": N_("speed"),
    "size": N_("size"),
    "date": N_("date"),
    "quality": N_("quality"),
    "balanced": N_("balance of quality and speed"),
}

# The record's section titles and field labels are collected from tpscalc.report.record by
# tpscalc.web.translations when it extracts messages.

# What an error page says in es and nl, by error code (the message itself is English: the engine
# and the catalog word it for the CLI and the API); anything else gets ERROR_DEFAULT.
ERROR_TEXTS: dict[str, str] = {
    "not_found": N_("There is no page at this address."),
    "unknown_model": N_("We know no model by that name."),
    "unknown_card": N_("We know no graphics card by that name."),
    "unknown_language": N_("The site is not available in that language."),
    "bad_context": N_("The context length must be a whole number of tokens, within the range "
                      "the form offers."),
    "context_beyond_model": N_("This model cannot hold that much context: choose a shorter "
                               "context length."),
    "bad_quality": N_("That is not a quantization we know."),
    "bad_page": N_("That page number does not exist."),
}
ERROR_DEFAULT = N_("One of the settings in the address cannot be used.")


def error_text(code: str) -> str:
    """The msgid an error page shows for error `code` outside English."""
    return ERROR_TEXTS.get(code, ERROR_DEFAULT)
