# ai-context as a GitHub container action (action.yml: runs.using = docker).
# The official slim image, by tag: no digest is pinned because none could be verified here,
# and an invented digest would only break the build.
FROM python:3.12-slim

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

# Install from the project's own metadata: the dependency ranges live in pyproject.toml,
# in one place, for the image, CI and developers alike.
RUN pip install --no-cache-dir .

# No USER line on purpose: GitHub requires Docker container actions to run as the default
# Docker user, root. Its docs say not to use USER, or the action cannot access
# GITHUB_WORKSPACE (nor write GITHUB_OUTPUT / GITHUB_STEP_SUMMARY, which the runner mounts).
# The Action is an explicit subcommand; a bare `ai-context` only prints its help.
ENTRYPOINT ["ai-context", "action"]
