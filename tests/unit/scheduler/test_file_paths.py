"""Paths for the file browser, judged before anything reaches a cluster."""

from __future__ import annotations

import pytest

from app.scheduler.config import ClusterConfigError, cluster_from_mapping
from app.scheduler.errors import InvalidFilePath
from app.scheduler.file_paths import (
    clean_path,
    display_name,
    expand_roots,
    has_plain_name,
    is_under_roots,
    new_name,
    split_parent,
    upload_part_name,
)

HOME = "/home/alice"


@pytest.mark.parametrize(
    ("given", "clean"),
    [
        ("/home/alice", "/home/alice"),
        ("/home/alice/", "/home/alice"),
        ("//home//alice///run", "/home/alice/run"),
        ("/home/./alice/.", "/home/alice"),
        ("~", HOME),
        ("~/", HOME),
        ("~/data/x.csv", "/home/alice/data/x.csv"),
        ("/", "/"),
        ("/home/alice/a name with spaces #1", "/home/alice/a name with spaces #1"),
        ("/home/alice/line\nbreak", "/home/alice/line\nbreak"),
    ],
)
def test_paths_are_normalised(given: str, clean: str) -> None:
    assert clean_path(given, HOME) == clean


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("", "No path"),
        ("relative/path", "must start with /"),
        ("~bob/x", "must start with /"),
        ("/home/alice/../bob", "'..'"),
        ("/home/alice/..", "'..'"),
        ("../../etc", "must start with /"),
        ("/home/alice/\x00x", "NUL"),
        ("/home/alice/\udcff", "not valid UTF-8"),
        ("/" + "a" * 5000, "longer than"),
    ],
)
def test_bad_paths_are_refused_with_a_reason(given: str, message: str) -> None:
    with pytest.raises(InvalidFilePath, match=message):
        clean_path(given, HOME)


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("/home/alice", True),
        ("/home/alice/x", True),
        ("/home/alicex", False),
        ("/home", False),
        ("/etc/passwd", False),
        ("/scratch/alice", True),
    ],
)
def test_only_paths_under_a_root_are_inside(path: str, inside: bool) -> None:
    assert is_under_roots(path, ("/home/alice", "/scratch")) is inside


def test_home_root_expands_to_the_users_home_and_duplicates_go() -> None:
    assert expand_roots(["~", "/scratch/", "/home/alice"], HOME) == (HOME, "/scratch")


@pytest.mark.parametrize("name", ["results.csv", "a b", "ünïcode", ".hidden", "x" * 255])
def test_plain_names_can_be_created(name: str) -> None:
    assert new_name(name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Give a name"),
        ("   ", "Give a name"),
        ("a/b", "'/'"),
        (".", "cannot be used"),
        ("..", "cannot be used"),
        ("line\nbreak", "control characters"),
        ("tab\there", "control characters"),
        ("bad\udc80byte", "control characters"),
        ("x" * 256, "at most 255 bytes"),
    ],
)
def test_awkward_new_names_are_refused(name: str, message: str) -> None:
    with pytest.raises(InvalidFilePath, match=message):
        new_name(name)


def test_names_that_are_not_utf8_are_shown_but_not_addressable() -> None:
    raw = b"caf\xe9".decode("utf-8", "surrogateescape")
    assert not has_plain_name(raw)
    assert display_name(raw) == "caf\ufffd"


def test_the_top_folder_has_no_parent_to_change_it_in() -> None:
    assert split_parent("/home/alice/x") == ("/home/alice", "x")
    assert split_parent("/x") == ("/", "x")
    with pytest.raises(InvalidFilePath):
        split_parent("/")


def test_upload_ids_are_hex_so_the_part_name_is_plain() -> None:
    assert upload_part_name("0" * 32) == ".portal-upload-" + "0" * 32 + ".part"
    for bad in ("../../etc/passwd", "A" * 32, "0" * 31):
        with pytest.raises(InvalidFilePath):
            upload_part_name(bad)


BASE = {"login_host": "h", "service_user": "s", "service_key": "k", "user_ca_key": "c"}


def test_file_roots_default_to_the_log_roots() -> None:
    config = cluster_from_mapping("c", {**BASE, "log_roots": ["/home", "/project"]})
    assert config.browse_roots == ("/home", "/project")
    config = cluster_from_mapping("c", {**BASE, "file_roots": ["~", "/scratch"]})
    assert config.browse_roots == ("~", "/scratch")


def test_file_roots_must_be_absolute_or_home() -> None:
    with pytest.raises(ClusterConfigError, match="file_roots"):
        cluster_from_mapping("c", {**BASE, "file_roots": ["scratch"]})
