"""The carbon catalogs: grid intensity, embodied carbon and cloud regions, loaded and validated."""

from __future__ import annotations

import csv
import importlib.util
import shutil
from importlib import resources
from pathlib import Path

import pytest

from pricing import CatalogError, UnknownIdError, load_catalog, read_catalog

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


@pytest.fixture
def data_dir(tmp_path):
    target = tmp_path / "data"
    with resources.as_file(resources.files("pricing").joinpath("data", "catalog.json")) as meta:
        shutil.copytree(Path(meta).parent, target)
    return target


def _rewrite(path: Path, change) -> None:
    """Apply ``change(rows)`` to the rows of a CSV file and write it back."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    rows = change(rows)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _set(path: Path, match: dict, **values: str) -> None:
    def change(rows):
        hits = [r for r in rows if all(r[k] == v for k, v in match.items())]
        assert hits, f"{match} not in {path.name}"
        hits[0].update(values)
        return rows

    _rewrite(path, change)


def test_sizes_and_kinds(cat):
    kinds = [g.kind for g in cat.grids.values()]
    assert (kinds.count("country"), kinds.count("us_subregion"), kinds.count("cloud_region")) == (
        41,
        28,
        83,
    )
    assert len(cat.embodied) == len(cat.gpus) + len(cat.tier_counts)  # one per size
    assert len(cat.regions) == 13


def test_figures_keep_their_source_and_basis(cat):
    us = cat.grid("us")
    assert (us.id, us.g_co2e_per_kwh, us.year, us.basis) == ("US", 383.6, 2024, "lifecycle")
    assert "Ember" in us.source
    egrid = cat.grid("US-AVG")
    assert (egrid.g_co2e_per_kwh, egrid.year, egrid.basis) == (375.3, 2022, "operational")
    assert egrid.estimated  # CO2e derived from the CO2, CH4 and N2O rates
    google = cat.grid("GCP/us-central1")
    assert (google.g_co2e_per_kwh, google.basis, google.year) == (431.95, "operational", 2025)
    assert "yearly/2025.csv" in google.note
    assert cat.grid("nebius/eu-north1").estimated  # the compiler's own zone mapping


def test_every_instance_has_a_region_with_a_known_grid_and_pue(cat):
    for inst in cat.instances.values():
        region = cat.region(inst)
        assert cat.grid(region.grid).g_co2e_per_kwh > 0
        assert 1.0 <= region.pue <= 3.0
    aws = cat.region(cat.instance("aws/p3.2xlarge"))
    assert (aws.grid, aws.pue, aws.estimated_fields) == ("aws/us-east-1", 1.14, ())
    gcp = cat.region(cat.instance("gcp/a2-highgpu-1g"))
    assert (gcp.grid, gcp.pue) == ("gcp/us-central1", 1.11)
    lam = cat.region(cat.instance("lambda/gpu_1x_a100"))
    assert (lam.grid, lam.estimated_fields) == ("US", ("grid", "pue"))


def test_embodied_figures_and_estimates(cat):
    h100 = cat.gpu_embodied("h100-sxm5-80gb")
    assert h100.kg_co2e == 164.0 and "1,312 / 8" in h100.note  # NVIDIA's HGX H100 PCF / 8
    a100 = cat.gpu_embodied("a100-sxm4-40gb")
    assert (a100.kg_co2e, a100.estimated) == (127.6, False)
    # H200: the H100 share with its memory part scaled by HBM: 164*(0.58 + 0.42*141/80) = 216.5
    assert cat.gpu_embodied("h200-sxm-141gb").kg_co2e == 216.5
    generic = cat.gpu_embodied("rtx-4090")
    assert (generic.kg_co2e, generic.estimated) == (150.0, True)
    # 4-GPU tier: 1000 + 112 GB * 533/384 + 2 SSDs (200) + 2 HDDs (100) = 1455.46 -> 1455.5
    assert cat.platform_embodied(3).kg_co2e == 1455.5
    assert cat.platform_embodied(8).kg_co2e == 3000.0
    assert all(e.estimated for (kind, _), e in cat.embodied.items() if kind == "platform")


def test_unknown_grid_lists_the_closest_ids_as_spelt(cat):
    with pytest.raises(UnknownIdError) as err:
        cat.grid("aws/us-eest-1")
    assert "aws/us-east-1" in err.value.close_matches
    with pytest.raises(UnknownIdError) as err:
        cat.grid("usa")
    assert "US" in err.value.close_matches


def test_the_grid_file_is_built_from_the_reference_table(tmp_path):
    spec = importlib.util.spec_from_file_location("build_carbon", ROOT / "tools/build_carbon.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--check"]) == 0
    assert tool.main(["--out", str(tmp_path)]) == 0
    shipped = (ROOT / "pricing/data/grid_carbon.csv").read_text(encoding="utf-8")
    assert (tmp_path / "grid_carbon.csv").read_text(encoding="utf-8") == shipped


@pytest.mark.parametrize(
    ("file", "match", "values", "problem"),
    [
        ("grid_carbon.csv", {"id": "US"}, {"g_co2e_per_kwh": "-1"}, "must be >= 0 [gCO2e/kWh]"),
        ("grid_carbon.csv", {"id": "US"}, {"g_co2e_per_kwh": "x"}, "'x' is not a number"),
        ("grid_carbon.csv", {"id": "US"}, {"basis": "market"}, "unknown basis 'market'"),
        ("grid_carbon.csv", {"id": "US"}, {"kind": "state"}, "unknown kind 'state'"),
        ("grid_carbon.csv", {"id": "US"}, {"id": "USA"}, "invalid country id 'USA'"),
        ("grid_carbon.csv", {"id": "CN"}, {"id": "us"}, "invalid country id 'us'"),
        ("grid_carbon.csv", {"id": "US"}, {"year": "24"}, "must be >= 1990"),
        ("grid_carbon.csv", {"id": "US"}, {"source": ""}, "is required"),
        ("cloud_regions.csv", {"provider": "aws"}, {"pue": "0.9"}, "must be >= 1 [-]"),
        ("cloud_regions.csv", {"provider": "aws"}, {"grid": "aws/us-eest-1"}, "unknown grid id"),
        ("cloud_regions.csv", {"provider": "aws"}, {"estimated_fields": "price"}, "'price'"),
        ("embodied_carbon.csv", {"id": "t4"}, {"kg_co2e": "0"}, "must be > 0 [kg CO2e]"),
        ("embodied_carbon.csv", {"id": "t4"}, {"kind": "server"}, "unknown kind 'server'"),
        ("embodied_carbon.csv", {"id": "t4"}, {"id": "t5"}, "no gpu 't5' in the catalog"),
        ("embodied_carbon.csv", {"id": "8"}, {"id": "16"}, "no platform '16' in the catalog"),
    ],
)
def test_bad_rows_are_refused_at_file_row_and_column(data_dir, file, match, values, problem):
    _set(data_dir / file, match, **values)
    with pytest.raises(CatalogError) as err:
        read_catalog(data_dir)
    assert problem in str(err.value)
    assert err.value.file == file


def test_every_gpu_and_tier_needs_an_embodied_row(data_dir):
    _rewrite(data_dir / "embodied_carbon.csv", lambda rows: [r for r in rows if r["id"] != "l4"])
    with pytest.raises(CatalogError, match="no embodied carbon for gpu l4"):
        read_catalog(data_dir)


def test_every_instance_region_needs_a_row(data_dir):
    _rewrite(
        data_dir / "cloud_regions.csv", lambda rows: [r for r in rows if r["provider"] != "gcp"]
    )
    with pytest.raises(CatalogError, match="in region 'us-central1' of gcp, which has no row"):
        read_catalog(data_dir)


def test_grid_ids_are_unique(data_dir):
    _rewrite(data_dir / "grid_carbon.csv", lambda rows: [*rows, dict(rows[0])])
    with pytest.raises(CatalogError, match="duplicate id 'us'"):
        read_catalog(data_dir)
