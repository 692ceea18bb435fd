"""A missing service, browser or corpus skips on a developer's machine and fails under CI."""

import pytest

from conftest import unavailable


@pytest.mark.parametrize("value", ["true", "1", "TRUE"])
def test_ci_fails_instead_of_skipping(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI=true, and redis is down"):
        unavailable("redis is down")


@pytest.mark.parametrize("value", [None, "", "false", "0"])
def test_elsewhere_it_skips(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception, match="redis is down"):
        unavailable("redis is down")
