"""The ClickUp mirror's pure core: the link (`link`), ClickUp's tasks and fields (`clickup`), the
mirror text (`text`), and one run's settings, findings and targets (`targets`).

The issue body is the authority; the field is a copy rebuilt from it that holds nothing changing
from run to run, so an unchanged block costs no write (ClickUp's free plan caps custom-field
writes at 60). Findings: AIC701 task not found; AIC702 several fields bear the mirror field's
name; AIC703 a custom id without a workspace id; AIC704 a task linked from several issues;
AIC705 a link nobody trusted wrote; AIC706 the field already mirrors another issue.
"""
