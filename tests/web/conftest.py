"""A small, fixed catalog for the web tests (the real one is large and built elsewhere)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tpscalc.catalog import store
from tpscalc.catalog.schema import Architecture, Card, Model
from tpscalc.web import reports

CARDS = (
    Card(name="GeForce RTX 4090", slug="geforce-rtx-4090", vendor="NVIDIA", memory_gib=24,
         bandwidth_gb_s=1008, release_date="2022-09-20", kind="desktop", tflops_fp16_dense=165.2),
    Card(name="GeForce RTX 3060 12 GB", slug="geforce-rtx-3060-12-gb", vendor="NVIDIA",
         memory_gib=12, bandwidth_gb_s=360, release_date="2021-01-12", kind="desktop"),
    Card(name="H100 SXM5 80 GB", slug="h100-sxm5-80-gb", vendor="NVIDIA", memory_gib=80,
         bandwidth_gb_s=3350, release_date="2022-03-21", kind="datacenter", tflops_fp16_dense=989),
    Card(name="Radeon RX 7900 XTX", slug="radeon-rx-7900-xtx", vendor="AMD", memory_gib=24,
         bandwidth_gb_s=960, release_date="2022-11-03", kind="desktop"),
    Card(name="GeForce GTX 1650", slug="geforce-gtx-1650", vendor="NVIDIA", memory_gib=4,
         bandwidth_gb_s=128, release_date="2019-04-23", kind="desktop"),
)

STARCODER_ARCH = Architecture(num_layers=40, hidden_size=6144, intermediate_size=24576,
                              num_attention_heads=48, num_kv_heads=4, head_dim=128,
                              vocab_size=49152, max_context=16384, ffn_gated=False,
                              source="litgpt:starcoder2-15b")
MODELS = (
    Model(name="StarCoder 2 15B", slug="starcoder-2-15b", parameters=15e9,
          organization=("Hugging Face", "ServiceNow", "NVIDIA", "BigCode"),
          publication_date="2024-02-29",
          hf_repo="bigcode/starcoder2-15b", architecture=STARCODER_ARCH,
          record={"model": "StarCoder 2 15B",
                  "organization": "Hugging Face,ServiceNow,NVIDIA,BigCode",
                  "country_of_organization": "United States of America", "domain": "Language",
                  "task": "Code generation,Code autocompletion", "training_compute_flop": 3.9e23,
                  "reference": "StarCoder 2 and The Stack v2: The Next Generation",
                  "link": "https://arxiv.org/abs/2402.19173",
                  "open_model_weights": "Open — downloadable"}),
    Model(name="WizardCoder-15.5B", slug="wizardcoder-15-5b", parameters=15.5e9,
          organization=("Microsoft",), publication_date="2023-06-14",
          record={"model": "WizardCoder-15.5B", "organization": "Microsoft"}),
    Model(name="Tiny Chat 1B", slug="tiny-chat-1b", parameters=1.1e9, organization=("Example Lab",),
          publication_date="2024-01-04", record={}),
)


@pytest.fixture(autouse=True)
def small_catalog(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every web test sees the five cards and three models above, and no cached report (nor a
    catalog date worked out from another catalog: the golden pages, run after these, read the
    real one's)."""
    monkeypatch.setattr(store, "cards", lambda: CARDS)
    monkeypatch.setattr(store, "models", lambda: MODELS)
    reports.clear_cache()
    store.catalog_as_of.cache_clear()
    yield
    reports.clear_cache()
    store.catalog_as_of.cache_clear()


@pytest.fixture()
def client() -> Iterator[object]:
    """A TestClient on a fresh app (server errors become responses, as in production)."""
    from fastapi.testclient import TestClient

    from tpscalc.web.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture()
def many_cards(monkeypatch: pytest.MonkeyPatch) -> int:
    """120 cards that all run the test models: three table pages."""
    from tpscalc.catalog import store
    from tpscalc.web import reports

    cards = tuple(Card(name=f"Bench {i:03d}", slug=f"bench-{i:03d}", vendor="NVIDIA",
                       memory_gib=80, bandwidth_gb_s=1000 + i, release_date="2024-01-01",
                       kind="datacenter", tflops_fp16_dense=500) for i in range(120))
    monkeypatch.setattr(store, "cards", lambda: cards)
    reports.clear_cache()
    return len(cards)
