import json

import pytest

from compliance_sync import SignatureError, signature_header, verify_signature

SECRET = "whsec_test"
BODY = json.dumps({"id": "d1", "type": "change", "data": {"resource_key": "TX"}}).encode()


def test_a_signed_delivery_verifies_and_parses():
    header = signature_header(secret=SECRET, body=BODY, timestamp=1_800_000_000)

    event = verify_signature(body=BODY, header=header, secret=SECRET, now=1_800_000_010)

    assert event["data"]["resource_key"] == "TX"


def test_any_of_several_signatures_matches_during_a_rotation():
    good = signature_header(secret=SECRET, body=BODY, timestamp=1_800_000_000).split(",")[1]
    header = f"t=1800000000,v1={'0' * 64},{good}"

    assert verify_signature(body=BODY, header=header, secret=SECRET, now=1_800_000_000)


@pytest.mark.parametrize(
    ("body", "header", "now"),
    [
        (BODY + b" ", None, 1_800_000_000),  # tampered body
        (BODY, "t=1800000000,v1=" + "a" * 64, 1_800_000_000),  # another secret
        (BODY, None, 1_800_000_301),  # outside the five-minute window
        (BODY, None, 1_799_999_699),  # from the future beyond the window
        (BODY, "", 1_800_000_000),
        (BODY, "v1=abc", 1_800_000_000),
        (BODY, "t=\uff11\uff18\uff10\uff10000000,v1=abc", 1_800_000_000),  # not ASCII digits
        (BODY, "t=1800000000", 1_800_000_000),
    ],
)
def test_anything_else_is_refused(body, header, now):
    signed = signature_header(secret=SECRET, body=BODY, timestamp=1_800_000_000)

    with pytest.raises(SignatureError):
        verify_signature(
            body=body, header=signed if header is None else header, secret=SECRET, now=now
        )
