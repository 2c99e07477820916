"""Weights files of an earlier evaluation layout, carried over to the current one.

A layout only grows: each later version keeps every feature of the one before under the same
group and feature name, and adds features (layout 2: the edge tables "edge:0" and "edge:1" and
king mobility's "denied_squares"; layout 3: the wide tables "wide:0", "wide:1", ...). Upgrading
copies the kept parameters and starts the new ones at zero, so the file scores as before except
where the rules of drawish material changed (from layout 1).
The engine refuses an old file with an error that says how to upgrade it
(``damka tune --upgrade OLD --out NEW``).
"""

from __future__ import annotations

import os

from .eval_layout import describe, fingerprint, layout, layout_core, rule_set, weights_header
from .variants import Variant, as_variant
from .weights_file import WeightsError, WeightsHeader, peek_header, read_params, write_params

__all__ = ["legacy_version", "legacy_hint", "upgrade_params", "upgrade_file"]

#: what each layout added: kinds of table (the prefix of their groups' names), features
#: appended to a group, and the keys of the layout's description
_ADDED_GROUPS = {2: ("edge:",), 3: ("wide:",)}
_ADDED_FEATURES = {2: {"king_mobility": ("denied_squares",)}, 3: {}}
_ADDED_KEYS = {2: ("edge_windows", "rotated_edge_windows", "king_denied"),
               3: ("wide_windows", "rotated_wide_windows")}
_OLD_DRAWS = {1: "1v1 kings /16; 10x10 lone king vs <=3 with a king /2 or /32; "
                 "8x8 flying lone king vs <=2 /16"}


def _current_version(variant: Variant) -> int:
    return int(layout_core(variant).info()["version"])


def _added_after(version: int, current: int) -> range:
    return range(version + 1, current + 1)


def _is_added(group: str, version: int, current: int) -> bool:
    return any(group.startswith(kind)
               for v in _added_after(version, current) for kind in _ADDED_GROUPS[v])


def _legacy_info(variant: Variant, version: int) -> dict:
    """The core's info() as the layout of ``version`` gave it (every earlier layout)."""
    info = dict(layout_core(variant).info())
    current = info["version"]
    if not 1 <= version < current:
        raise ValueError(f"no description of layout version {version}")
    added: dict[str, tuple[str, ...]] = {}
    for v in _added_after(version, current):
        for group, new_names in _ADDED_FEATURES[v].items():
            added[group] = added.get(group, ()) + new_names
    names = {g: tuple(n for n in kept if n not in added.get(g, ()))
             for g, kept in info["feature_names"].items()}
    groups = [(g, len(names[g]) if g in names else n) for g, n in info["groups"]
              if not _is_added(g, version, current)]
    info.update(version=version, feature_names=names, groups=groups)
    return info


def _legacy_description(variant: Variant, version: int) -> dict:
    out = describe(_legacy_info(variant, version))
    for v in _added_after(version, _current_version(variant)):
        for key in _ADDED_KEYS[v]:
            out.pop(key)
    if version in _OLD_DRAWS:
        out["draws"] = _OLD_DRAWS[version]
    return out


def _legacy_layouts(variant: Variant) -> dict[str, int]:
    """Fingerprint -> layout version of every earlier layout of the rule set."""
    return {fingerprint(_legacy_description(variant, v)): v
            for v in range(1, _current_version(variant))}


def legacy_version(variant: "str | Variant", path: "str | os.PathLike[str]") -> int | None:
    """The earlier layout version a weights file is of, or None (current, or unknown)."""
    header = peek_header(path)
    return None if header is None else \
        _legacy_layouts(rule_set(as_variant(variant))).get(header.fingerprint)


def legacy_hint(variant: "str | Variant", path: "str | os.PathLike[str]") -> str:
    """What to say about a file the engine refuses: how to upgrade it, when it is an older
    layout's ("" otherwise)."""
    version = legacy_version(variant, path)
    if version is None:
        return ""
    return (f"; it is a file of evaluation layout {version} (this engine's is "
            f"{layout_core(as_variant(variant)).info()['version']}): upgrade it with "
            f"`damka tune --upgrade {os.fspath(path)} --out NEW.dkw`")


def upgrade_params(variant: "str | Variant", raw: bytes, version: int) -> bytes:
    """Parameters of layout ``version`` (little-endian int16 bytes) in the current layout
    (copied as bytes, group by group: no byte order to mind)."""
    rules = rule_set(as_variant(variant))
    offsets = {name: offset for name, offset, _size in layout(rules).groups}
    new = bytearray(2 * layout(rules).n_params)
    at = 0
    for name, features in _legacy_info(rules, version)["groups"]:
        n = 2 * 2 * features  # bytes: two int16 parameters a feature
        start = 2 * offsets[name]
        new[start:start + n] = raw[at:at + n]
        at += n
    if at != len(raw):
        raise ValueError(f"layout {version} has {at // 2} parameters, the file {len(raw) // 2}")
    return bytes(new)


def upgrade_file(variant: "str | Variant", src: "str | os.PathLike[str]",
                 dst: "str | os.PathLike[str]") -> int:
    """Write ``src`` (a weights file of an earlier layout) as ``dst`` in the current layout;
    returns the version it came from. WeightsError when src is no earlier layout's file of
    this rule set."""
    rules = rule_set(as_variant(variant))
    version = legacy_version(rules, src)
    current = weights_header(rules)
    if version is None:
        found = peek_header(src)
        if found is None:
            read_params(src, current)  # the WeightsError that says what is wrong with it
            raise WeightsError(f"weights file {os.fspath(src)}: no weights file header")
        if found.fingerprint == current.fingerprint:
            raise WeightsError(f"weights file {os.fspath(src)}: already of the current layout")
        raise WeightsError(f"weights file {os.fspath(src)}: not a {rules.name} weights file of "
                           f"an earlier layout (it is {found.variant}'s, layout "
                           f"{found.fingerprint})")
    old_header = WeightsHeader(rules.name, fingerprint(_legacy_description(rules, version)),
                               sum(2 * n for _g, n in _legacy_info(rules, version)["groups"]))
    raw = read_params(src, old_header)
    write_params(dst, current, upgrade_params(rules, raw, version))
    return version
