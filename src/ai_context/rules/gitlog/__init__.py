"""What commits say about issues (pure): git is the witness of activity, never of the plan."""
