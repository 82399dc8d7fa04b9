from typing import Any


def add_setup_command(sub: Any) -> None:
    pass
