"""The quality panel's SVG (no browser needed); its triple counts are core measures
(tests/core/test_measures.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
from scipy.cluster.hierarchy import linkage

from foldwise.service.ui.dendrogram_svg import dendrogram_svg


def test_dendrogram_svg_is_valid_and_colours_groups() -> None:
    rng = np.random.default_rng(0)
    Z = linkage(rng.normal(size=(9, 2)), method="average")
    groups = ["howto"] * 4 + ["library"] * 4 + ["(not filed)"]
    svg = dendrogram_svg(Z, groups)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f".//{ns}polyline")) == 8
    ticks = root.findall(f".//{ns}line")
    assert len(ticks) == 9
    assert {t.get("stroke") for t in ticks} >= {"#b8bec7"}
    assert len({t.get("stroke") for t in ticks}) == 3
    assert "library" in svg and "&lt;" not in svg
