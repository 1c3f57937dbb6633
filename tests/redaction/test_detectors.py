"""Each built-in detector on strings it must and must not match."""

from __future__ import annotations

import pytest

from toolaudit.redaction import detect

POSITIVE = [
    ("pdb_id", "structure 1ABC was used", "1ABC"),
    ("pdb_id", "see pdb_00004hhb.", "pdb_00004hhb"),
    ("uniprot", "accession P12345 maps", "P12345"),
    ("uniprot", "A0A023GPI8 is long-form", "A0A023GPI8"),
    ("uuid", "run 123e4567-e89b-12d3-a456-426614174000 ok", "123e4567-e89b-12d3-a456-426614174000"),
    ("hex_digest", "sha 9f86d081884c7d659a2feaa0c55ad015 end", "9f86d081884c7d659a2feaa0c55ad015"),
    ("file_path", "csv: .../ThermoMPNN_inference_21009.csv", ".../ThermoMPNN_inference_21009.csv"),
    ("file_path", "read /data/runs/x.json now", "/data/runs/x.json"),
    ("file_path", "wrote ThermoMPNN_inference_21009.csv", "ThermoMPNN_inference_21009.csv"),
    ("version", "torch 2.13.0 installed", "2.13.0"),
    ("version", "tool v1.2 ran", "v1.2"),
    ("date", "at 2024-05-17T12:30:00Z we", "2024-05-17T12:30:00Z"),
    ("date", "released 17 May 2024", "17 May 2024"),
    ("numeric_id", "order 1234567 shipped", "1234567"),
    ("email", "mail a.b+c@ex-ample.org now", "a.b+c@ex-ample.org"),
    ("secret", "key sk-abcdefghijklmnop1234 here", "sk-abcdefghijklmnop1234"),
    ("secret", "Authorization: Bearer abcdefghijklmnopqrstu", "abcdefghijklmnopqrstu"),
    ("secret", "api_key=hunter2hunter2", "hunter2hunter2"),
    ("step_header", "### Step 3: thermompnn_ddg\nx", "### Step 3:"),
    ("trace_banner", "=== TOOL RESULT :: x ===\n", "=== TOOL RESULT :: x ==="),
    ("trace_banner", "[trace] step=1 tool=x status=OK\n", "[trace] step=1 tool=x status=OK"),
    ("section_header", "## Tool results\nbody", "## Tool results"),
    ("xml_tag", 'wrap <tool_result name="x"> it', '<tool_result name="x">'),
    ("field_name", "complex_id: 21009", "complex_id"),
    ("field_name", '{"pdb_id": "21009"}', "pdb_id"),
]

NEGATIVE = [
    ("pdb_id", "total_predictions: 2160 and F126"),
    ("pdb_id", "CDR3 CASSEGDTEAFF"),
    ("uniprot", "peptide KLVALGINAV"),
    ("uuid", "123e4567-e89b-12d3 truncated"),
    ("hex_digest", "deadbeefdeadbeef has no digit; 1234567890123456 no letter"),
    ("file_path", "counts 7/4/1 and ratio 5/41.7 and/or"),
    ("version", "ddg 1.815 kcal and identity 0.8800"),
    ("date", "ratio 12/4 and 3/27.3"),
    ("numeric_id", "total 40731 and x 1.1234567"),
    ("email", "not an@email"),
    ("secret", "password: short, token count: 12"),
    ("field_name", "Answer with an integer from 1 to 10 inside: tags"),
    ("xml_tag", "a < b > c"),
]


@pytest.mark.parametrize(("name", "text", "token"), POSITIVE)
def test_detect_finds_token(name: str, text: str, token: str) -> None:
    assert token in detect(name, text)


@pytest.mark.parametrize(("name", "text"), NEGATIVE)
def test_detect_ignores_lookalikes(name: str, text: str) -> None:
    assert detect(name, text) == []
