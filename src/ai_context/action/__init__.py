"""The Action's face: event -> route -> jobs -> outputs, step summary and annotations."""
