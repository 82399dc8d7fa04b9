"""What commits say about issues (pure): git is the witness of activity, never of the plan.

Commits (`core.events.Commit`) come from a push payload's `commits` (read once, by the event
layer) or from `git log` output (gitrepo.py runs git and hands the text to `log`). From each
message we read the issues it names and, when it is one, the checkpoint it records; comparing
that with an issue's block gives findings (`compare_block`; `push_findings` for a push event,
`derive` for a local history). Nothing here writes a block:
only the agent does (docs/design.md §1).

Issue references (`issues_named`): `#N` (so `Refs #N`, `Fixes: #N`, `closes #N`, ... in any
case), `GH-N`, `owner/repo#N` and `https://<host>/owner/repo/issues/N` (only for `repo` when it
is given; without it, any repository, but issue URLs only on github.com), and the trailer
`AI-Context-Issue: N[, M]`. Not a reference: `#N` glued to a word or a path (`abc#1`,
`/pull/12#3`, `&#123;`), anything inside a code span or a fenced code block.

Checkpoint commits, format v1 (`format_checkpoint` writes it, `read_checkpoint` reads it)::

    ai-context: <step text> completed [issue:N] [step:K]

    AI-Context-Checkpoint: v1

`[step:K]` is optional. The trailer carries the format version, so the subject can change in a
later version without making old commits unreadable (docs/seeds/001: "the regex is the schema"). A
commit with the trailer but a version this tool does not know is reported, never guessed at; so
is a subject in the checkpoint shape without the trailer.

Finding codes (stable):
  AIC501 warning  block behind git: commits naming the issue are newer than Last updated by more
                  than `GitRules.behind_after`
  AIC502 info     files drift: files changed by commits naming the issue are not covered by
                  Files touched (braces expanded; globs with `*`, `?`, `[...]` and `**` allowed;
                  a directory covers everything below it; an entry without a slash matches a
                  file or directory of that name at any depth, as in .gitignore)
  AIC503 warning  a checkpoint commit completed plan step K; the block does not say it is done
  AIC504 warning  a checkpoint commit completed plan step K; the block's plan has no step K
  AIC505 warning  a checkpoint commit in a format version this tool does not read
  AIC506 warning  a checkpoint commit that cannot be read (malformed, or without the version
                  trailer)

The package's modules follow those sections: `log` (git log output), `refs` (issue
references), `checkpoints` (the checkpoint format), `compare` (the rules, AIC501-506) and
`derive` (one task's history).
"""
