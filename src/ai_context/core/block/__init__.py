"""The AI Context block (pure): `syntax` (vocabulary, field lines), `model`, `locate` (where
blocks sit), `markers` (version and hash), `parse` (tolerant, every problem a Finding) and
`render` (one canonical form, so parse(render(m)) == m for every valid model)."""
