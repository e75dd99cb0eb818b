"""The annotated photos: reading, the fixed split, and the face geometry both stages share with the service."""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

SPECIES = ('dog', 'cat', 'bird', 'rabbit', 'hamster', 'guinea_pig')
# Class 0 of the detector is "no supported pet".
CLASSES = ('none',) + SPECIES
VIEWS = ('frontal', 'three-quarter', 'profile')
# Share of every species (and of the no-pet photos) held out for validation, chosen by a hash of the file name.
VALIDATION_SHARE = 0.12
# render-node/src/image-decoder.ts flattens transparent photos onto this colour.
FLATTEN_BACKGROUND = (236, 236, 232)
# The photo is kept at most this large in memory; both stages sample from it.
CACHE_SIDE = 1024


@dataclass
class Sample:
    file: str
    label: str  # a species, 'none', or 'skip' (a pet whose face could not be annotated)
    image: np.ndarray  # H×W×3 uint8, EXIF orientation applied, at most CACHE_SIDE
    scale: float  # cached pixels per photo pixel
    points: np.ndarray | None = None  # 5×2 in cached pixels: left eye, right eye, nose, mouth, chin
    hidden: tuple = ()
    hidden_eye: int | None = None  # which of the two eyes is estimated (profiles)
    view: str | None = None
    mouth_open: bool | None = None
    notes: str = ''
    extra: dict = field(default_factory=dict)

    @property
    def species(self) -> str:
        return self.label if self.label in SPECIES else self.file.split('-')[0] if self.label == 'skip' else 'none'


def default_data_dir() -> Path:
    return Path(os.environ.get('PETFACES_DIR', Path(__file__).resolve().parents[4] / 'shared' / 'petfaces'))


def is_validation(file: str) -> bool:
    """The fixed split: a file is held out when its name hashes into the lowest VALIDATION_SHARE."""
    digest = int(hashlib.sha1(file.encode()).hexdigest()[:8], 16)
    return digest / 0xFFFFFFFF < VALIDATION_SHARE


def load_photo(path: Path) -> Image.Image:
    image = Image.open(path)
    image = ImageOps.exif_transpose(image)
    if image.mode in ('RGBA', 'LA', 'P', 'PA'):
        # Transparency is flattened onto the render node decoder's background.
        rgba = image.convert('RGBA')
        flat = Image.new('RGB', rgba.size, FLATTEN_BACKGROUND)
        flat.paste(rgba, mask=rgba.getchannel('A'))
        return flat
    return image.convert('RGB')


CORRECTIONS = Path(__file__).resolve().parents[1] / 'corrections.json'


def corrected(annotations: dict) -> dict:
    """The annotations with the audited fixes of corrections.json applied (a null keeps the annotated point)."""
    fixes = json.loads(CORRECTIONS.read_text())
    for name, fix in fixes.items():
        if name.startswith('_') or name not in annotations:
            continue
        entry = annotations[name]
        for key, value in fix.items():
            if key == 'eyes':
                entry['eyes'] = [new if new is not None else old for old, new in zip(entry['eyes'], value)]
            else:
                entry[key] = value
    return annotations


def hidden_eye(entry: dict) -> int | None:
    """In a profile the estimated far eye is the one on the side the pet faces (towards its nose or beak)."""
    if 'eye' not in entry.get('hidden', []):
        return None
    mid = (entry['eyes'][0][0] + entry['eyes'][1][0]) / 2
    return 1 if entry['nose'][0] > mid else 0


def load_samples(data_dir: Path, files: list[str] | None = None) -> list[Sample]:
    annotations = corrected(json.loads((data_dir / 'landmarks.json').read_text()))
    names = files if files is not None else sorted(annotations)
    samples = []
    for name in names:
        entry = annotations[name]
        photo = load_photo(data_dir / 'images' / name)
        scale = min(1.0, CACHE_SIDE / max(photo.size))
        if scale < 1:
            photo = photo.resize((round(photo.width * scale), round(photo.height * scale)), Image.LANCZOS)
        label = entry['species']
        sample = Sample(file=name, label=label, image=np.asarray(photo), scale=scale, notes=entry.get('notes', ''))
        if label in SPECIES:
            pts = np.array([*entry['eyes'], entry['nose'], entry['mouth'], entry['chin']], dtype=np.float32)
            sample.points = pts * scale
            sample.hidden = tuple(entry.get('hidden', []))
            sample.hidden_eye = hidden_eye(entry)
            sample.view = entry.get('view')
            sample.mouth_open = bool(entry.get('mouth_open', False))
        samples.append(sample)
    return samples


# --- The canonical face crop: shared, constant for constant, with render-node/src/pet-face-model.ts. ---
# The crop is a square around the face, rotated so that the line from the eyes' midpoint to the mouth
# and chin points straight down, CROP_SIDE_IN_RADII face radii across.
CROP_SIDE_IN_RADII = 5.0
MIN_RADIUS = 4.0


def face_frame(eye_mid: np.ndarray, nose: np.ndarray, mouth: np.ndarray, chin: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Centre, side and angle (radians; the rotation that turns the face's downward axis to +y) of the crop."""
    key = np.stack([eye_mid, nose, mouth, chin])
    centre = (key.min(0) + key.max(0)) / 2
    radius = max(MIN_RADIUS, float(np.linalg.norm(key - centre, axis=1).max()))
    down = (mouth + chin) / 2 - eye_mid
    angle = math.atan2(down[0], down[1])  # 0 when the face points down
    return centre, CROP_SIDE_IN_RADII * radius, angle


def crop_matrix(centre: np.ndarray, side: float, angle: float, out: int) -> np.ndarray:
    """2×3 affine map from photo pixels to crop pixels (crop centre at out/2, face axis along +y)."""
    k = out / side
    c, s = math.cos(angle), math.sin(angle)
    # Rotate by +angle: a vector (sin a, cos a) along the face's axis maps to (0, 1).
    rot = np.array([[c, -s], [s, c]], dtype=np.float64) * k
    offset = np.array([out / 2, out / 2]) - rot @ centre
    return np.concatenate([rot, offset[:, None]], axis=1)


def key_points(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return points[:2].mean(0), points[2], points[3], points[4]


def face_length(points: np.ndarray) -> float:
    return float(np.linalg.norm(points[:2].mean(0) - points[4]))
