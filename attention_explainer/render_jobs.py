"""The renders of one build: the scenes that changed, in parallel, in the order that ends soonest.

The renders share the caches the build keeps in its work folder (one TeX cache, the made texts, a
real model's heads); any failure or interrupt stops them all (:class:`attention_explainer.processes.Renders`),
and what ends the build is told in one line.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from pathlib import Path

from attention_math import Scenario, scenario_to_toml

from .forkserver import start_fork_server
from .out_dir import write_text
from .plan import BundlePlan
from .processes import HEADS, TEXTS, Job, ProgressCallback, Renders, Stopped, render_scene, runner_environment
from .schedule import expected_cost, start_order

__all__ = ["prune_texts", "render_changed", "tex_cache_opened"]

TEXTS_KEPT = 5000  # how many shared texts are kept before they go


def render_changed(plan: BundlePlan, jobs: list[Job], progress: ProgressCallback | None) -> dict[str, Path]:
    """Render the scenes that changed, in parallel, in the order that ends soonest; return their clips."""
    scenario_file = plan.work / "scenario.toml"
    write_text(scenario_file, scenario_to_toml(plan.scenario))
    _keep_model_head(plan.scenario, plan.work / HEADS)
    to_render = plan.changed()
    for job in jobs:
        if job.spec not in to_render:
            job.status = "cached"
    lock = threading.Lock()

    def changed() -> None:
        if progress is not None:
            with lock:
                progress(jobs)

    changed()
    pending = [job for job in jobs if job.status == "waiting"]
    if not pending:
        return {}
    # One TeX cache for every scene (the runner shares it): kept only while no render that
    # wrote into it was interrupted, since an interrupted compile can leave a truncated SVG.
    prune_texts(plan.work / TEXTS)
    tex_complete = tex_cache_opened(plan.work)
    # In the order that ends soonest by the expected costs, so no core idles at the end while one long scene
    # runs on (see schedule.py).
    costs = [expected_cost(job.spec, plan.old_scenes, plan.settings) for job in pending]
    pending = [pending[i] for i in start_order(costs, plan.settings.jobs)]
    rendered = _run_jobs(pending, plan, scenario_file, changed)
    tex_complete.touch()
    return rendered


def _keep_model_head(scenario: Scenario, folder: Path) -> None:
    """A real model's head, which this process computed when it checked the scenario, kept in ``folder``
    for the renders (``--head-dir``): they read it back instead of each running the model again."""
    if scenario.model is None:
        return
    from attention_math.minilm import share_heads

    share_heads(folder)
    try:
        scenario.model_head()
    finally:
        share_heads(None)


def tex_cache_opened(work: Path) -> Path:
    """Clear the TeX cache in ``work`` unless the last renders into it all finished; return the
    marker to touch once these have (not inside the cache: manim clears the TeX folder)."""
    tex_complete = work / "tex.complete"
    if not tex_complete.exists():
        shutil.rmtree(work / "tex", ignore_errors=True)
    tex_complete.unlink(missing_ok=True)
    return tex_complete


def prune_texts(folder: Path) -> None:
    """The shared texts go when they are many: each scenario adds its own numbers."""
    if folder.is_dir() and sum(1 for _ in folder.iterdir()) > TEXTS_KEPT:
        shutil.rmtree(folder, ignore_errors=True)


def _run_jobs(
    pending: list[Job], plan: BundlePlan, scenario_file: Path, changed: Callable[[], None]
) -> dict[str, Path]:
    """Run the renders on ``settings.jobs`` threads; on any failure or interrupt stop them all."""
    pool = ThreadPoolExecutor(max_workers=max(1, plan.settings.jobs))
    renders = Renders()
    # one warm process imports manim once; each render is a fork of it (see forkserver)
    server = start_fork_server(plan.work, runner_environment(scenario_file)) if pending else None
    try:
        futures = [
            pool.submit(render_scene, job, plan.settings, plan.work, scenario_file, changed, renders, server)
            for job in pending
        ]
        wait(futures, return_when=FIRST_EXCEPTION)
        cause = _first_cause(futures)
        if cause is None:
            return {job.spec.name: future.result() for job, future in zip(pending, futures, strict=True)}
        renders.stop()
        pool.shutdown(wait=True, cancel_futures=True)  # once all have ended, an interrupt any saw comes first
        raise _first_cause(futures) or cause
    except BaseException:
        # interrupted or failed: stop every manim still running, keep nothing half-done
        renders.stop()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if server is not None:
            server.close(wait=False)  # it exits while the bundle is assembled


def _first_cause(futures: list[Future[Path]]) -> BaseException | None:
    """What ends the renders, if anything yet: a Ctrl-C or SIGTERM any render saw, else the first
    failure in the scenes' order; never the end of a render the build stopped itself."""
    ended = [future.exception() for future in futures if future.done() and not future.cancelled()]
    causes = [error for error in ended if error is not None and not isinstance(error, Stopped)]
    stops = [error for error in causes if isinstance(error, KeyboardInterrupt)]
    return (stops or causes or [None])[0]
