"""The Action's face: event -> route -> jobs -> outputs, step summary and annotations."""

from ai_context.action.route import route
from ai_context.action.run import run_action

__all__ = ["route", "run_action"]
