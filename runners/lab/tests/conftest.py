import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


@pytest.fixture
def no_hang():
    """A read that blocks fails its test after 10 s instead of hanging the suite."""
    def stuck(*_):
        raise TimeoutError("the read blocked")
    old = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)
