"""Per-address limits count an IPv6 client by its /64 and an IPv4 client by its address
(shared/http.py limit_key), whatever spelling of the address arrives."""

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from shared.http import limit_key

ipv6 = st.integers(min_value=0, max_value=2**128 - 1).map(ipaddress.IPv6Address)
ipv4 = st.integers(min_value=0, max_value=2**32 - 1).map(ipaddress.IPv4Address)
interface = st.integers(min_value=0, max_value=2**64 - 1)


@given(ipv6, interface)
def test_every_address_of_a_64_has_one_key(address, other_interface):
    if address.ipv4_mapped is not None:
        return
    neighbour = ipaddress.IPv6Address((int(address) >> 64 << 64) | other_interface)
    if neighbour.ipv4_mapped is not None:
        return

    assert limit_key(str(address)) == limit_key(neighbour.exploded.upper())


@given(ipv6, ipv6)
def test_addresses_of_different_64s_have_different_keys(first, second):
    if int(first) >> 64 == int(second) >> 64 or first.ipv4_mapped or second.ipv4_mapped:
        return

    assert limit_key(str(first)) != limit_key(str(second))


@given(ipv4, ipv4)
def test_ipv4_addresses_are_their_own_keys_also_when_mapped(first, second):
    mapped = ipaddress.IPv6Address(f"::ffff:{first}")

    assert limit_key(str(mapped)) == limit_key(str(first)) == str(first)
    assert (limit_key(str(first)) == limit_key(str(second))) == (first == second)


@given(st.text(max_size=60))
def test_text_that_is_not_an_address_is_its_own_key(text):
    try:
        ipaddress.ip_address(text)
    except ValueError:
        assert limit_key(text) == text
