# ai-context as a GitHub container action (action.yml: runs.using = docker).
# The official slim image, by tag. No digest is written here by hand: one that was not read from
# the registry would only break the build, and none can be read from where this was written.
# Dependabot's docker updates (.github/dependabot.yml) watch this line; they keep a tag@digest
# pin current but do not add a digest to a bare tag, so the first pin is a maintainer's: write
# `python:3.12-slim@sha256:<digest>` with the digest `docker buildx imagetools inspect
# python:3.12-slim` prints (or the one a release's provenance records), and Dependabot takes
# it from there.
FROM python:3.12-slim

# What the image says about itself (OCI annotations; GHCR links the package to `source`).
# The release workflow passes all three; a plain `docker build .` (the repository's own
# workflow, `image: Dockerfile`) gets the same fallback version as pyproject.toml.
ARG VERSION=0.0.0+unknown
ARG REVISION=unknown
ARG SOURCE=""
LABEL org.opencontainers.image.title="ai-context" \
      org.opencontainers.image.description="Keeps the AI Context blocks of GitHub issues valid, complete, mirrored and honest." \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"

# PYTHONUNBUFFERED: log lines and ::workflow-commands:: reach the runner as they are printed.
# PYTHONDONTWRITEBYTECODE: no .pyc files left in the user's workspace.
# PYTHONSAFEPATH: Python must not put the working directory (the user's checkout, which the
# runner mounts as the workdir) first on sys.path, where it could shadow our package.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONSAFEPATH=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

WORKDIR /opt/ai-context

# Only what the install needs: the metadata (pyproject.toml names README.md as the readme),
# the package and the top-level templates/ (the wheel carries them inside the package).
COPY pyproject.toml README.md ./
COPY src ./src
COPY templates ./templates

# Install from the project's own metadata: the dependency ranges live in pyproject.toml, in one
# place, for the image, CI and developers alike. `.` only: no test or bench extras in the image.
# The build context has no .git, so hatch-vcs takes the version from the build argument (the
# variable lives for this RUN only, not in the image).
RUN SETUPTOOLS_SCM_PRETEND_VERSION="${VERSION}" pip install --no-cache-dir .

# The bundled templates compiled once, here, into the image: a run loads them without compiling
# (adapters/templates.py). Outside WORKDIR and the workspace, which a run never reads bytecode
# from, and a run never writes to it.
ENV AI_CONTEXT_TEMPLATE_BYTECODE=/usr/local/share/ai-context/template-bytecode
RUN python -m ai_context.adapters.templates

# No USER line on purpose: GitHub requires Docker container actions to run as the default
# Docker user, root. Its docs say not to use USER, or the action cannot access
# GITHUB_WORKSPACE (nor write GITHUB_OUTPUT / GITHUB_STEP_SUMMARY, which the runner mounts).
# The Action is an explicit subcommand; a bare `ai-context` only prints its help.
ENTRYPOINT ["ai-context", "action"]
