"""``attention-explainer course COURSE.toml``: many bundles, their scenes rendered on Dask distributed.

Every scene render of every bundle is a task on a Dask cluster: a local one on this machine by
default (:func:`local_cluster`), or the cluster a ``--scheduler tcp://HOST:PORT`` names, whose
workers have the project installed and share no disk with the command. A task renders its scene
in the worker's own folder (:func:`attention_explainer.products.render_scene_products`) and sends
back what the bundle needs of it as bytes; the command writes those into the bundle's work folder
(:func:`attention_explainer.products.install_products`) and assembles the bundle as ``render`` does
(:func:`attention_explainer.bundle.build_bundle`), each bundle as soon as its last scene is back.
Which scenes render is the bundle's own affair (its manifest and clip keys, computed here): a
second run with nothing changed renders nothing. A worker lost mid-render costs its tasks a second
run elsewhere (Dask reschedules them); the bundle is assembled only from whole results.

Needs the ``course`` extra (``distributed``).
"""

from __future__ import annotations

import atexit
import functools
import html
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from attention_math import Scenario, ScenarioError, scenario_to_toml

from .bundle import build_bundle, plan_bundle
from .course_file import Course, CourseEntry, bundle_keys, folder_name, load_course
from .forkserver import ForkServer, start_fork_server
from .manifest import PAGE
from .out_dir import atomic_write, prepare_out_dir
from .outputs.pptx import PPTX
from .outputs.slides import DECK
from .plan import BundleError, BundlePlan, BundleSettings, SceneSpec
from .products import SceneProducts, install_products, render_scene_products
from .render_options import check_scenes_can_draw, settings_from_args
from .selection import select_scenes

INSTALL_COURSE = "pip install 'attention-explainer[course]'"

try:
    import distributed
except ImportError:  # pragma: no cover - the extra is installed wherever the tests run
    raise ImportError(
        f"attention_explainer.course needs the course extra (Dask distributed); install it with {INSTALL_COURSE}"
    ) from None

_DASK: Any = distributed  # untyped: its calls go through Any


__all__ = [
    "INSTALL_COURSE",
    "CourseOutcome",
    "course_client",
    "dask_setup",
    "load_course",
    "local_cluster",
    "render_task",
    "run_course",
    "stderr_line",
]

Say = Callable[[str], None]
Connect = Callable[[], AbstractContextManager[Any]]  # a client of the cluster, closed after


@dataclass
class _Bundle:
    """One entry of the course on its way: its plan, the renders it waits for, what became of it."""

    entry: CourseEntry
    folder: Path
    scenario: Scenario | None = None
    chosen: list[SceneSpec] = field(default_factory=list)
    plan: BundlePlan | None = None
    waiting: dict[str, Any] = field(default_factory=dict)  # scene name -> its future
    products: dict[str, SceneProducts] = field(default_factory=dict)
    error: str | None = None  # one line, when the bundle was not made
    status: int = 0  # 2 bad input, 1 a render failed
    rendered: int = 0


@dataclass(frozen=True)
class CourseOutcome:
    """What a run made: the page, each bundle's folder or the line saying why it was not made."""

    page: Path
    made: tuple[Path, ...]
    failed: tuple[str, ...]
    workers_lost: tuple[str, ...]
    status: int  # the command's exit status: 0, 2 (a bundle's input), 1 (a render failed)


# --- on the worker ---------------------------------------------------------------------------


_SERVERS: list[ForkServer | None] = []  # the worker's fork server, started with its first render


@functools.cache
def _worker_code() -> str:
    from .fingerprint import code_version

    return code_version()


def _worker_folder() -> Path:
    """The worker's own folder for its renders and caches (Dask removes it with the worker)."""
    try:
        return Path(_DASK.get_worker().local_directory) / "attention-explainer"
    except ValueError:  # not in a worker (a test calling the task directly)
        import tempfile

        return Path(tempfile.gettempdir()) / f"attention-course-{os.getpid()}"


def render_task(spec: SceneSpec, settings: BundleSettings, scenario_toml: str, key: str, code: str) -> SceneProducts:
    """A Dask task: render one scene on this worker, return its products as bytes.

    ``code`` is the command's code version: a worker running other code would make clips its keys
    do not describe, so it refuses.
    """
    if _worker_code() != code:
        raise BundleError(
            f"scene {spec.name}: the worker runs other code than the command (code {_worker_code()}, not {code}); "
            "install the same version of attention-explainer on every worker",
            1,
        )
    work = _worker_folder()
    if not _SERVERS:
        work.mkdir(parents=True, exist_ok=True)
        _SERVERS.append(start_fork_server(work, dict(os.environ)))  # manim imported once per worker
        server = _SERVERS[0]
        if server is not None:  # ended (and waited for) as the worker's process ends
            atexit.register(server.close)
    return render_scene_products(spec, settings, scenario_toml, key, work, _SERVERS[0])


# --- in the command --------------------------------------------------------------------------


def local_cluster(workers: int) -> Any:
    """A Dask cluster on this machine: ``workers`` processes of one thread, no dashboard."""
    import logging

    return _DASK.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
        silence_logs=logging.CRITICAL,  # a failed render is said once, by the command, not by the worker too
        preload=[__name__],  # dask_setup: a Ctrl-C is the command's
    )


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in each worker of the local cluster as it starts.

    The workers are in the command's process group, so a Ctrl-C reaches them too; the command
    answers it (one line, exit 130) and closes the cluster, so a worker lets it pass rather than
    print a traceback of its own. Its renders (through a fork server started with the default
    handling) still stop at once.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _let_pass)


def _let_pass(signum: int, frame: Any) -> None:
    """A SIGINT handler that does nothing (unlike SIG_IGN, not inherited by the processes started)."""


def run_course(course: Course, out: Path, connect: Connect, say: Say) -> CourseOutcome:
    """Plan every bundle, send the renders that changed to the cluster ``connect()`` gives a client
    of (only if any did), assemble each bundle as its last render comes back, write the course
    page; return what became of it all."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    bundles = [_Bundle(entry, out / folder_name(entry)) for entry in course.entries]
    for bundle in bundles:
        _plan(bundle, say)
    lost: list[str] = []
    with ExitStack() as stack:
        # the cluster starts while the scenarios are checked (which imports manim here)
        client = _open_early(stack, connect) if any(_renders(b) for b in bundles) else None
        for bundle in bundles:
            if _renders(bundle):
                _check(bundle, say)
        for bundle in bundles:
            if bundle.error is None and not _renders(bundle):
                _assemble(bundle, say, started)  # nothing to render: no cluster needed for it
        if client is not None and any(_renders(b) for b in bundles):
            lost = _render_on(client.result(), bundles, say, started)
    return _outcome(_write_page(course, out, bundles), bundles, lost)


def _renders(bundle: _Bundle) -> bool:
    """Is the bundle to be made and has it scenes to render?"""
    return bundle.error is None and bundle.plan is not None and bool(bundle.plan.changed())


def _open_early(stack: ExitStack, connect: Connect) -> Future[Any]:
    """Connect in the background; the client is closed with ``stack`` (after the thread is done)."""
    pool = stack.enter_context(ThreadPoolExecutor(max_workers=1))
    return pool.submit(lambda: stack.enter_context(connect()))


def _render_on(client: Any, bundles: list[_Bundle], say: Say, started: float) -> list[str]:
    """Every changed scene a task on ``client``'s cluster; each bundle assembled as its last comes
    back; the workers lost on the way."""
    before = set(client.nthreads())
    by_future = _submit(bundles, client)
    workers = f"{len(before)} worker{'s' if len(before) != 1 else ''}"
    say(f"[{time.monotonic() - started:6.1f} s] {len(by_future)} scene renders sent to {workers}")
    lost: list[str] = []
    for future in _DASK.as_completed(list(by_future)):
        bundle = by_future[future]
        _collect(bundle, future, say, started)
        lost += _workers_lost(client, before, lost, say)
        if bundle.error is None and not bundle.waiting:
            _assemble(bundle, say, started)
    return lost


def _plan(bundle: _Bundle, say: Say) -> None:
    """The bundle's scenario, scenes and plan, as render makes them of its options; a bad entry is said in
    one line and left out."""
    entry = bundle.entry
    try:
        bundle.chosen = select_scenes(entry.args.scenes, entry.lecture)
        bundle.scenario = _scenario(entry)
    except (BundleError, ScenarioError) as error:
        return _refuse(bundle, *_where(entry, error), say, 2)
    try:
        folder = prepare_out_dir(bundle.folder).absolute()
    except BundleError as error:
        return _refuse(bundle, entry.label("name"), str(error).split(": ", 1)[1], say, 2)
    settings = replace(settings_from_args(entry.args), jobs=1)  # a worker renders one scene at a time
    bundle.plan = plan_bundle(bundle.scenario, folder, settings, bundle.chosen)


def _where(entry: CourseEntry, error: Exception) -> tuple[str, str]:
    """The entry's key a per-bundle error is about, and why, for one line: the option its message begins
    with (``--scenes: ...``: ``bundle 3 (scenes)``, the option said once), the key a scenario's field is
    (``query: ...``: ``bundle 3 (query)``), else the entry's scenario (``bundle 3 (preset)``)."""
    message = str(error)
    first, _, rest = message.partition(": ")
    if first.startswith("--") and " " not in first:
        return entry.label(first[2:]), rest
    # "query: no token ...", or "--layer and --head choose ...": the first of them the entry gives
    named = [word.removeprefix("--").replace("_", "-") for word in first.split()]
    given = [key for key in named if key in bundle_keys() and getattr(entry.args, key.replace("-", "_"), None)]
    return entry.label(given[0] if given else entry.source or "preset"), message


def _check(bundle: _Bundle, say: Say) -> None:
    """What the scenes cannot draw of the bundle's scenario, before any of them renders (as render checks it)."""
    assert bundle.scenario is not None
    try:
        check_scenes_can_draw(bundle.scenario, bundle.chosen)
    except ScenarioError as error:
        _refuse(bundle, *_where(bundle.entry, error), say, 2)


def _refuse(bundle: _Bundle, where: str, why: str, say: Say, status: int) -> None:
    bundle.error, bundle.status = f"{where}: {why}", status
    say(f"error: {bundle.error}; the other bundles go on")


def _scenario(entry: CourseEntry) -> Scenario:
    """The entry's scenario, as render makes it of its options (the lecture's preset when none is named)."""
    from attention_math.__main__ import scenario_from_args
    from scenes.registry import lecture

    return scenario_from_args(entry.args, default=lecture(entry.lecture).preset)


def _submit(bundles: list[_Bundle], client: Any) -> dict[Any, _Bundle]:
    """One task per scene that changed, the course's first bundles first; each future's bundle."""
    by_future: dict[Any, _Bundle] = {}
    for bundle in bundles:
        plan = bundle.plan
        if bundle.error is not None or plan is None or not plan.changed():
            continue
        toml = scenario_to_toml(plan.scenario)
        for spec in plan.changed():
            future = client.submit(
                render_task, spec, plan.settings, toml, plan.keys[spec.name], plan.code,
                key=f"bundle-{bundle.entry.number}-{spec.name}-{plan.keys[spec.name]}-{os.getpid()}",
                pure=False, priority=-bundle.entry.number, retries=0,
            )  # fmt: skip
            bundle.waiting[spec.name] = future
            by_future[future] = bundle
    return by_future


def _collect(bundle: _Bundle, future: Any, say: Say, started: float) -> None:
    """Take one finished render: its products, or the line saying why the bundle cannot be made."""
    name = next(scene for scene, waited in bundle.waiting.items() if waited is future)
    del bundle.waiting[name]
    if bundle.error is not None or future.cancelled():  # the bundle failed already: the rest is moot
        return
    error = future.exception()
    if error is None:
        products: SceneProducts = future.result()
        bundle.products[name] = products
        say(f"[{time.monotonic() - started:6.1f} s] {_label(bundle)}: {name} rendered on {products.made_by} "
            f"in {products.seconds:.1f} s")
        return
    why = str(error) if isinstance(error, BundleError) else _task_failure(error)
    _refuse(bundle, _label(bundle), why if why.startswith("scene ") else f"scene {name}: {why}", say, 1)
    for other in bundle.waiting.values():
        other.cancel()


def _task_failure(error: BaseException) -> str:
    """A render task's failure that is no render's error, in a few words."""
    if isinstance(error, _DASK.KilledWorker):
        return "every worker that ran its render died (Dask gave up on it: KilledWorker)"
    return f"{type(error).__name__}: {error}"


def _label(bundle: _Bundle) -> str:
    return f"{bundle.entry.label()} ({bundle.folder.name})"


def _workers_lost(client: Any, before: set[str], lost: list[str], say: Say) -> list[str]:
    """Workers that left the cluster since the start, not yet said: their renders ran again elsewhere."""
    now = set(client.nthreads())
    gone = sorted(before - now - set(lost))
    for worker in gone:
        say(f"worker {worker} left the cluster; Dask runs its renders again on the others")
    return gone


def _assemble(bundle: _Bundle, say: Say, started: float) -> None:
    """Write the bundle from its plan and the products that came back, as render does."""
    assert bundle.plan is not None and bundle.scenario is not None
    plan = bundle.plan

    def renders(_: BundlePlan, to_render: list[SceneSpec]) -> dict[str, tuple[Path, float]]:
        made = {spec.name: bundle.products[spec.name] for spec in to_render if spec.name in bundle.products}
        return {spec.name: (install_products(plan, spec, made[spec.name]), made[spec.name].seconds)
                for spec in to_render if spec.name in made}

    try:
        manifest = build_bundle(bundle.scenario, plan.out, plan.settings, bundle.chosen, renders=renders)
    except BundleError as error:
        return _refuse(bundle, _label(bundle), str(error), say, error.status)
    bundle.rendered = len(manifest["rendered"])
    done = f"{bundle.rendered} of {len(bundle.chosen)} scenes rendered" if bundle.rendered else "nothing changed"
    say(f"[{time.monotonic() - started:6.1f} s] {_label(bundle)}: made ({done}): {plan.out / 'index.html'}")


def _outcome(page: Path, bundles: list[_Bundle], lost: list[str]) -> CourseOutcome:
    made = tuple(b.folder for b in bundles if b.error is None)
    failed = tuple(b.error for b in bundles if b.error is not None)
    statuses = {b.status for b in bundles}
    status = 2 if 2 in statuses else 1 if 1 in statuses else 0
    return CourseOutcome(page, made, failed, tuple(lost), status)


def _write_page(course: Course, out: Path, bundles: list[_Bundle]) -> Path:
    """The course page, ``index.html`` under ``--out``: each bundle made with links to its lecture page and,
    where it has them, its slide deck and PowerPoint deck; a line for each bundle not made."""
    items = [_page_item(bundle) for bundle in bundles]
    title = html.escape(course.title)
    page = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n'
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto}li{margin:.4em 0}"
        ".failed{color:#a00}</style>\n</head>\n<body>\n"
        f"<h1>{title}</h1>\n<ol>\n" + "\n".join(items) + "\n</ol>\n</body>\n</html>\n"
    )
    target = out / "index.html"
    with atomic_write(target) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return target


BUNDLE_LINKS = ((PAGE, "lecture page"), (DECK, "slides"), (PPTX, "PowerPoint"))
"""What the course page links of each bundle made, where the bundle holds it: ``(file, link text)``."""


def _page_item(bundle: _Bundle) -> str:
    """One bundle's line of the course page."""
    entry = bundle.entry
    what = html.escape(bundle.scenario.title if bundle.scenario else (entry.value or ""))
    lecture = html.escape(entry.lecture)
    if bundle.error is not None:
        return f'<li class="failed">{entry.number}. {lecture}: not made: {html.escape(bundle.error)}</li>'
    def href(file: str) -> str:
        return html.escape(f"{bundle.folder.name}/{file}", quote=True)

    scenes = ", ".join(html.escape(s.name) for s in bundle.chosen)
    links = [f'<a href="{href(file)}">{name}</a>' for file, name in BUNDLE_LINKS if (bundle.folder / file).is_file()]
    return (f'<li><a href="{href(PAGE)}">{entry.number}. {lecture}: {what}</a> <small>({scenes})</small>'
            + (f" <small>{' · '.join(links)}</small>" if links else "") + "</li>")


@contextmanager
def course_client(scheduler: str | None, workers: int) -> Iterator[Any]:
    """A client of the cluster at ``scheduler``, or of a local cluster of ``workers``; both closed after.

    Neither is used as a context manager: the client may be opened on another thread than the one
    that closes it (:func:`run_course` connects while it checks the scenarios), and a Client's
    ``with`` sets a context variable that only its own thread may reset.
    """
    cluster = local_cluster(workers) if scheduler is None else None
    try:
        try:
            client = _DASK.Client(cluster if cluster is not None else scheduler, timeout=30)
        except (OSError, TimeoutError, ValueError) as error:
            raise BundleError(f"--scheduler: cannot reach {scheduler} ({error})", 2) from None
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def stderr_line(line: str) -> None:
    """A progress line on stderr."""
    print(line, file=sys.stderr, flush=True)
