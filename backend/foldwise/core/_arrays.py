"""Fitted models as plain arrays: strings and folder paths packed without pickle.

A fitted model kept between requests (docs/recluster.md, "Instant suggestions") is stored
as a dict of numeric arrays, written as a deflated ``.npz`` (:func:`to_npz`) and read with
``np.load(..., allow_pickle=False)``: loading it runs no code, whoever wrote the file.
Strings are UTF-8 bytes plus offsets rather than numpy unicode arrays, which drop trailing
NUL characters; a folder name or term may hold any character.
"""

from __future__ import annotations

import io
import itertools
import zipfile
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

#: Bumped when the array layout changes; a model of another format is refused on load.
FORMAT_VERSION = 1

#: zlib level of :func:`to_npz`. The recluster's tree waits for its model's archive, and
#: at 2,000 filed documents ``np.savez_compressed``'s level 6 took 0.54 s of CPU for 8.0 MB,
#: level 1 0.23 s for 8.6 MB: most of it is the dense SVM coefficients, on which level 6
#: gains little (docs/recluster.md, "The model's archive at zlib level 1").
COMPRESS_LEVEL = 1

Arrays = dict[str, NDArray[np.generic]]


def pack_strings(strings: Sequence[str]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """UTF-8 bytes of all ``strings`` and offsets, shapes (n_bytes,) and (n_strings + 1,)."""
    encoded = [str(s).encode("utf-8", "surrogatepass") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in encoded])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


def unpack_strings(data: NDArray[np.generic], offsets: NDArray[np.generic]) -> list[str]:
    """The inverse of :func:`pack_strings`; ``ValueError`` on inconsistent arrays."""
    data = np.asarray(data)
    offsets = np.asarray(offsets)
    if data.dtype != np.uint8 or data.ndim != 1 or offsets.ndim != 1 or offsets.size < 1:
        raise ValueError("packed strings must be 1-D uint8 bytes and 1-D offsets")
    if offsets[0] != 0 or offsets[-1] != data.size or (np.diff(offsets) < 0).any():
        raise ValueError("packed string offsets do not match their bytes")
    raw = data.tobytes()
    return [
        raw[a:b].decode("utf-8", "surrogatepass")
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
    ]


def pack_paths(
    paths: Sequence[Sequence[str]],
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64]]:
    """Folder paths as packed components plus path offsets into the components.

    Returns bytes (n_bytes,), component offsets (n_components + 1,) and path offsets
    (n_paths + 1,): path ``i`` is components ``path_offsets[i]:path_offsets[i + 1]``.
    """
    components = [c for p in paths for c in p]
    data, offsets = pack_strings(components)
    path_offsets = np.zeros(len(paths) + 1, dtype=np.int64)
    path_offsets[1:] = np.cumsum([len(p) for p in paths])
    return data, offsets, path_offsets


def unpack_paths(
    data: NDArray[np.generic], offsets: NDArray[np.generic], path_offsets: NDArray[np.generic]
) -> list[tuple[str, ...]]:
    """The inverse of :func:`pack_paths`."""
    components = unpack_strings(data, offsets)
    po = np.asarray(path_offsets)
    if po.ndim != 1 or po.size < 1 or po[0] != 0 or po[-1] != len(components):
        raise ValueError("packed path offsets do not match their components")
    if (np.diff(po) < 0).any():
        raise ValueError("packed path offsets must not decrease")
    bounds = po.tolist()
    return [tuple(components[a:b]) for a, b in itertools.pairwise(bounds)]


def to_npz(arrays: Mapping[str, NDArray[np.generic]]) -> bytes:
    """``arrays`` as the bytes of a compressed ``.npz``; refuses object arrays (pickles)."""
    for name, a in arrays.items():
        if np.asarray(a).dtype.hasobject:
            raise ValueError(f"array {name!r} holds Python objects; it would need a pickle")
    buffer = io.BytesIO()
    # What np.savez_compressed writes (one ``.npy`` member per array), at our zlib level.
    with zipfile.ZipFile(
        buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL
    ) as archive:
        for name, a in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(a), allow_pickle=False)
    return buffer.getvalue()


def from_npz(data: bytes, names: Collection[str] | None = None) -> Arrays:
    """The arrays of an ``.npz`` written by :func:`to_npz`, read without unpickling.

    ``names``: read only those members that the archive has (the others are not
    decompressed). ``ValueError`` for an archive holding a pickled (object) array or no
    valid archive.
    """
    # Only a zip archive: np.load would also read a bare .npy, or try a pickle (refused).
    if not bytes(data[:4]) == b"PK\x03\x04":
        raise ValueError("not a .npz archive")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            keep = None if names is None else set(names)
            wanted = [n for n in npz.files if keep is None or n in keep]
            arrays = {name: npz[name] for name in wanted}
    except ValueError:
        raise
    except Exception as exc:  # zipfile.BadZipFile, OSError, EOFError, ...
        raise ValueError(f"not a valid .npz archive: {exc}") from exc
    # NpzFile hands back the raw bytes of a member that is not an .npy file.
    bad = sorted(name for name, a in arrays.items() if not isinstance(a, np.ndarray))
    if bad:
        raise ValueError(f"not a valid .npz archive: members {bad} are not arrays")
    return arrays


def split(arrays: Mapping[str, NDArray[np.generic]], prefix: str) -> Arrays:
    """The arrays whose names start with ``prefix``, with the prefix removed."""
    return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}


def prefixed(arrays: Mapping[str, NDArray[np.generic]], prefix: str) -> Arrays:
    """``arrays`` with every name prefixed by ``prefix``."""
    return {prefix + k: np.asarray(v) for k, v in arrays.items()}


def require(arrays: Mapping[str, NDArray[np.generic]], names: Sequence[str], what: str) -> None:
    """``ValueError`` unless ``arrays`` has every name of ``names`` and the current format."""
    missing = [n for n in (*names, "format_version") if n not in arrays]
    if missing:
        raise ValueError(f"{what} arrays lack {missing}")
    version = int(np.asarray(arrays["format_version"]).reshape(-1)[0])
    if version != FORMAT_VERSION:
        raise ValueError(f"{what} arrays are format {version}, this version reads {FORMAT_VERSION}")


def scalar(arrays: Mapping[str, NDArray[np.generic]], name: str) -> float:
    """The single number stored under ``name``."""
    a = np.asarray(arrays[name])
    if a.size != 1 or a.dtype.kind not in "biuf":
        raise ValueError(f"{name!r} must be one number, got dtype {a.dtype} shape {a.shape}")
    return float(a.reshape(-1)[0])
