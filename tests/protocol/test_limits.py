"""The one frame-size measure of every socket (a2ui.core.content.limits)."""

from a2ui.core.content import limits


def test_text_is_measured_in_utf8_bytes():
    assert limits.utf8_size("abc") == 3
    assert limits.utf8_size("é") == 2
    assert limits.utf8_size("😀") == 4
    assert limits.utf8_size(b"\x00\xff") == 2


def test_a_lone_surrogate_is_measured_not_raised():
    assert limits.utf8_size("\ud800") == 3
    assert limits.over_limit("\ud800" * 4, 11)
    assert not limits.over_limit("\ud800" * 4, 12)


def test_limit_boundaries():
    assert not limits.over_limit("a" * 10, 10)
    assert limits.over_limit("a" * 11, 10)
    assert not limits.over_limit("é" * 5, 10)
    assert limits.over_limit("é" * 6, 10)  # 6 characters, 12 bytes: only the bytes tell
    assert limits.over_limit("😀" * 3, 11)
    assert not limits.over_limit(b"x" * 10, 10)
    assert limits.over_limit(bytearray(11), 10)
