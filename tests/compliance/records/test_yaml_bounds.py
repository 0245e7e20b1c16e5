"""The YAML bounds: the cheap pre-check never lets a too-deep or aliased file through."""

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_site.records.documents import MAX_DEPTH, _may_exceed_bounds

leaves = st.one_of(st.none(), st.integers(), st.text(max_size=8))


def nest(depth: int, kinds: list[str], leaf):
    value = leaf
    for kind in kinds[:depth]:
        value = {"k": value, "other": 1} if kind == "map" else [value, 2]
    return value


def depth_of(content: bytes) -> int:
    depth = deepest = 0
    for event in yaml.parse(content, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
    return deepest


@given(
    depth=st.integers(min_value=0, max_value=45),
    kinds=st.lists(st.sampled_from(["map", "seq"]), min_size=45, max_size=45),
    leaf=leaves,
    flow=st.sampled_from([False, True, None]),
    indent=st.integers(min_value=2, max_value=9),
)
@settings(max_examples=300, deadline=None)
def test_a_file_passed_by_the_pre_check_is_within_the_depth_limit(depth, kinds, leaf, flow, indent):
    content = yaml.safe_dump(
        nest(depth, kinds, leaf), default_flow_style=flow, indent=indent
    ).encode()

    if not _may_exceed_bounds(content):
        assert depth_of(content) <= MAX_DEPTH


def test_an_alias_always_goes_to_the_full_check():
    assert _may_exceed_bounds(b"a: &x [1]\nb: *x\n")
