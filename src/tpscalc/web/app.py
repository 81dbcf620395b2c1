"""The FastAPI application: routes, static files, one error shape, wrapped in the guard."""
from __future__ import annotations

import gc
import json
import os
from collections.abc import Sequence
from importlib import resources

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from tpscalc import __version__
from tpscalc.web import api, errors, fit_page, health, openapi, pages
from tpscalc.web.guard import Guard, Limits


def create_app(limits: Limits | None = None,
               allowed_hosts: Sequence[str] | None = None) -> FastAPI:
    """A new application serving the site, the JSON API and /openapi.json.

    limits: the guard's request limits (default `Limits()`). allowed_hosts: Host header values
    to answer (e.g. "tpscalc.example"); None answers any host (local use).
    """
    app = FastAPI(
        title="tpscalc",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,  # the guard redirects relative; Host never builds a Location
        description="Which graphics card runs which open-weight language model, and how fast.",
    )
    static_dir = str(resources.files("tpscalc.web").joinpath("static"))
    app.mount("/static", StaticFiles(directory=static_dir), name="static")
    app.include_router(health.router)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(fit_page.router)
    app.add_exception_handler(errors.WebError, errors.web_error_handler)
    app.add_exception_handler(StarletteHTTPException, errors.http_error_handler)
    app.add_exception_handler(RequestValidationError, errors.validation_error_handler)
    app.add_exception_handler(Exception, errors.unexpected_error_handler)
    openapi.install(app)
    # The guard checks the Host (not Starlette's TrustedHostMiddleware): its 400 has the JSON
    # error shape under /api/ and the security headers, like every other answer.
    return Guard(app, limits, allowed_hosts)  # type: ignore[return-value]


LIMITS_ENV = "TPSCALC_SERVE"  # how `tpscalc serve` hands its options to each worker process


def limits_to_env(max_in_flight: int, deadline_s: float, allowed_hosts: Sequence[str]) -> str:
    """The serve options as the JSON that `app_from_env` reads back in each worker."""
    return json.dumps({"max_in_flight": max_in_flight, "deadline_s": deadline_s,
                       "allowed_hosts": list(allowed_hosts)})


def app_from_env() -> FastAPI:
    """The app as `tpscalc serve` configured it (uvicorn's factory, once per worker), warmed
    up before it listens, its collector settled."""
    options = json.loads(os.environ.get(LIMITS_ENV) or "{}")
    limits = Limits(max_in_flight=int(options.get("max_in_flight", Limits.max_in_flight)),
                    deadline_s=float(options.get("deadline_s", Limits.deadline_s)))
    app = create_app(limits, options.get("allowed_hosts") or None)
    warm_up()
    settle_collector()
    return app


def warm_up() -> None:
    """Load what the first requests load lazily, so that they do not all wait on it at once
    and overflow the queue into 503s: the catalog, the calibration and the report modules
    (~1.5 s), by building one report; numpy, the placement search and every model's placement
    tables (a first rig page took 4-7 s), by building a rig report that is not kept; and the
    page templates of every language, compiled."""
    from tpscalc.catalog import store
    from tpscalc.i18n import LANGUAGES
    from tpscalc.report.request import CARD_RIG_REPORT_PARAMS, ReportRequest, parse_request
    from tpscalc.web import reports
    from tpscalc.web.render import environment

    cards = store.cards()
    if cards:
        reports.card_report_bytes(cards[0].slug, ReportRequest())
    discrete = next((c for c in cards if not c.unified_memory), None)
    if discrete is not None:  # a rig of two: every model walks the placement search
        reports.card_builder()(discrete, parse_request({"gpus": "2", "ram": "64"},
                                                       CARD_RIG_REPORT_PARAMS))
    for lang in LANGUAGES:
        env = environment(lang)
        for name in env.list_templates(filter_func=lambda n: n.endswith(".html")):
            env.get_template(name)


# Young container objects allowed before the cycle collector runs (CPython's default: 700).
GC_YOUNG_THRESHOLD = 20_000


def settle_collector() -> None:
    """Leave the worker's long-lived objects (catalog, engine memos, templates) out of the
    cycle collector's walks, and run it every GC_YOUNG_THRESHOLD young objects, not 700.

    A rig report makes ~10 container objects a row over ~850 rows: with the defaults that set
    off ~50 collections a build, each walking what survived, about a fifth of the build's CPU
    (benchmarks/rig_report_speed.py); frozen and less often, a build pays one or two. The
    objects of a request are freed by their reference counts as before: only cycles wait.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
