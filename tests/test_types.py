"""Type-table readers (extract/types.py): tsv, N-Triples, textent, FIGER map, title join."""

from __future__ import annotations

import pytest

from extract.types import (
    figer_type,
    freebase_id,
    read_figer_map,
    read_ntriples,
    read_textent,
    read_tsv,
    read_type_rows,
    textent_names,
    textent_titles,
    title_key,
    title_type_rows,
)
from warehouse.errors import InputError


def test_tsv(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("entity\ttype\n# comment\n/m/0d6lp\t/location/citytown\n\n/m/01\t/people/person\n")
    assert list(read_tsv(path)) == [("/m/0d6lp", "/location/citytown"), ("/m/01", "/people/person")]
    path.write_text("/m/0d6lp\t/location/citytown\n/m/01 /people/person\n")
    with pytest.raises(InputError) as err:
        list(read_tsv(path))
    assert err.value.line == 2 and "entity<TAB>type" in err.value.problem


def test_ntriples(tmp_path):
    ns = "http://rdf.freebase.com/ns/"
    path = tmp_path / "fb.nt"
    path.write_text(
        f"<{ns}m.0d6lp>\t<{ns}type.object.type>\t<{ns}location.citytown>\t.\n"
        f'<{ns}m.0d6lp>\t<{ns}type.object.name>\t"Berlin"@en\t.\n'
        f"<{ns}m.01_x> <{ns}type.object.type> <{ns}people.person> .\n"
    )
    stats: dict = {}
    assert list(read_ntriples(path, stats=stats)) == [
        ("/m/0d6lp", "/location/citytown"),
        ("/m/01_x", "/people/person"),
    ]
    assert stats == {"other_predicate": 1}
    assert freebase_id("ns:m.0abc") == "/m/0abc"
    path.write_text("garbage line\n")
    with pytest.raises(InputError, match="N-Triples"):
        list(read_ntriples(path))


def test_textent_and_title_join(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text(
        "freebase_id\twikipedia_title\ttypes\n/m/02ph8bj\tHillsborough, Carriacou\tlocation-city,location\n"
        "/m/0x\tMercury (planet)\tlocation-celestial_object\n"
    )
    rows = list(read_textent(path))
    assert rows[0] == ("/m/02ph8bj", "Hillsborough, Carriacou", ["/location/city", "/location"])
    assert list(read_type_rows(path, "textent"))[:2] == [
        ("/m/02ph8bj", "/location/city"),
        ("/m/02ph8bj", "/location"),
    ]
    titles = textent_titles([path])
    assert titles[title_key("hillsborough,  carriacou")] == {"/location/city", "/location"}
    assert list(title_type_rows([("Q1", "Mercury"), ("Q2", "Nowhere")], titles)) == [
        ("Q1", "/location/celestial_object")
    ]
    assert textent_names([path])["/m/0x"] == "Mercury (planet)"
    assert figer_type("person-artist") == "/person/artist"
    bad = tmp_path / "bad.tsv"
    bad.write_text("mid\ttitle\n")
    with pytest.raises(InputError, match="header"):
        list(read_textent(bad))


def test_figer_map(tmp_path):
    path = tmp_path / "types.map"
    path.write_text("/base/terrorism/terrorist\t/person/terrorist\n/people/person\t/person\n")
    assert list(read_figer_map(path)) == [
        ("/base/terrorism/terrorist", "/person/terrorist"),
        ("/people/person", "/person"),
    ]
    path.write_text("people.person person\n")
    with pytest.raises(InputError, match="figer"):
        list(read_figer_map(path))


def test_shared_type_tables(shared_data):
    first = next(read_textent(shared_data / "types/textent/dev.tsv"))
    assert first == ("/m/02ph8bj", "Hillsborough, Carriacou", ["/location/city", "/location"])
    mapping = dict(read_figer_map(shared_data / "types/figer/types.map"))
    assert len(mapping) > 500 and mapping["/base/terrorism/terrorist"] == "/person/terrorist"
