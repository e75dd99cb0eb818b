"""Training examples: geometric and photometric augmentation, and the targets of both networks."""
from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter

from .dataset import CLASSES, SPECIES, VIEWS, Sample, crop_matrix, face_frame, key_points
from .nets import DETECTOR_STRIDE, LANDMARK_STRIDE, OFFSET_UNIT

GREY = (128, 128, 128)


def warp(image: np.ndarray, matrix: np.ndarray, out_w: int, out_h: int) -> Image.Image:
    """Samples `image` through the 2×3 map `matrix` (source → output pixels), shrinking first so it never aliases."""
    pil = Image.fromarray(image)
    zoom = math.sqrt(abs(np.linalg.det(matrix[:, :2])))
    factor = int(1 / zoom) if zoom < 0.5 else 1
    if factor > 1:
        pil = pil.reduce(factor)
        matrix = matrix @ np.diag([factor, factor, 1.0])
    full = np.vstack([matrix, [0, 0, 1]])
    inverse = np.linalg.inv(full)
    return pil.transform((out_w, out_h), Image.AFFINE, data=tuple(inverse[:2].reshape(-1)), resample=Image.BILINEAR, fillcolor=GREY)


def apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    return points @ matrix[:, :2].T + matrix[:, 2]


def rotation_about(angle: float, scale: float, pivot: np.ndarray, target: np.ndarray, mirror: bool) -> np.ndarray:
    c, s = math.cos(angle) * scale, math.sin(angle) * scale
    linear = np.array([[c, -s], [s, c]])
    if mirror:
        linear = linear @ np.diag([-1.0, 1.0])
    return np.concatenate([linear, (target - linear @ pivot)[:, None]], axis=1)


def cage_bars(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Thin parallel bars across the photo, as a bird or a hamster seen through its cage."""
    from PIL import ImageDraw

    w, h = image.size
    draw = ImageDraw.Draw(image)
    gap = rng.uniform(0.04, 0.12) * max(w, h)
    width = max(1, int(rng.uniform(0.004, 0.015) * max(w, h)))
    grey = int(rng.integers(20, 235))
    shade = tuple(int(np.clip(grey + rng.integers(-15, 16), 0, 255)) for _ in range(3))  # metal, white or black wire
    angle = rng.uniform(-0.3, 0.3) + (math.pi / 2 if rng.random() < 0.5 else 0)
    dx, dy = math.sin(angle), math.cos(angle)
    span = w + h
    for k in range(int(-span / gap), int(span / gap) + 1):
        cx, cy = w / 2 + k * gap * dy, h / 2 - k * gap * dx
        draw.line([(cx - dx * span, cy - dy * span), (cx + dx * span, cy + dy * span)], fill=shade, width=width)
    return image


def photometric(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Colour, blur, low resolution, noise and JPEG artefacts: what phone photos and web copies do; now and then cage bars."""
    if rng.random() < 0.08:
        image = cage_bars(image, rng)
    if rng.random() < 0.8:
        image = ImageEnhance.Brightness(image).enhance(rng.uniform(0.6, 1.4))
        image = ImageEnhance.Contrast(image).enhance(rng.uniform(0.6, 1.4))
        image = ImageEnhance.Color(image).enhance(rng.uniform(0.5, 1.5))
    if rng.random() < 0.1:
        image = image.convert('L').convert('RGB')
    if rng.random() < 0.15:
        hsv = np.asarray(image.convert('HSV')).copy()
        hsv[..., 0] = (hsv[..., 0].astype(int) + int(rng.integers(-12, 13))) % 256
        image = Image.fromarray(hsv, 'HSV').convert('RGB')
    if rng.random() < 0.2:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 2.0)))
    if rng.random() < 0.2:
        w, h = image.size
        k = rng.uniform(2, 5)
        image = image.resize((max(8, int(w / k)), max(8, int(h / k))), Image.BILINEAR).resize((w, h), Image.BILINEAR)
    if rng.random() < 0.15:
        a = np.asarray(image).astype(np.float32) + rng.normal(0, rng.uniform(3, 12), (image.size[1], image.size[0], 3))
        image = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if rng.random() < 0.2:
        buffer = io.BytesIO()
        image.save(buffer, 'JPEG', quality=int(rng.integers(15, 60)))
        image = Image.open(io.BytesIO(buffer.getvalue())).convert('RGB')
    return image


def to_tensor_array(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / 255.0


def letterbox_matrix(width: int, height: int, side: int) -> np.ndarray:
    """The service's letterbox: the photo scaled to fit D×D and centred."""
    scale = side / max(width, height)
    return np.array([[scale, 0, (side - width * scale) / 2], [0, scale, (side - height * scale) / 2]])


def random_angle(rng: np.random.Generator, upside_share: float) -> float:
    if rng.random() < upside_share:
        return rng.uniform(-math.pi, math.pi)
    return float(np.clip(rng.normal(0, math.radians(12)), -math.radians(40), math.radians(40)))


def detector_example(sample: Sample, rng: np.random.Generator | None, side: int) -> dict:
    """One photo for the detector: image D×D and targets (class, centre heatmap, offsets, and their masks)."""
    h, w = sample.image.shape[:2]
    pets = sample.points is not None
    key = np.stack(key_points(sample.points)) if pets else None
    if rng is None:
        matrix = letterbox_matrix(w, h, side)
    else:
        for _ in range(10):
            angle = random_angle(rng, 0.3)
            mirror = rng.random() < 0.5
            base = side / max(w, h)
            if pets and rng.random() < 0.35:
                # Zoom in around the face: the face grows, the rest of the photo leaves the frame.
                zoom = rng.uniform(1.0, 3.0)
                pivot = key.mean(0) + rng.normal(0, 0.5, 2) * np.ptp(key, 0).max()
            else:
                zoom = math.exp(rng.uniform(math.log(0.45), 0.0))
                pivot = np.array([w / 2, h / 2])
            spread = side * max(0.0, 1 - zoom) / 2 + side * 0.15
            target = np.array([side / 2, side / 2]) + rng.uniform(-spread, spread, 2)
            matrix = rotation_about(angle, base * zoom, pivot, target, mirror)
            if not pets:
                break
            centre = face_frame(*apply(matrix, key))[0]
            if (centre > 4).all() and (centre < side - 4).all():
                break
        else:
            matrix = letterbox_matrix(w, h, side)
    image = warp(sample.image, matrix, side, side)
    if rng is not None:
        image = photometric(image, rng)

    cells = side // DETECTOR_STRIDE
    heat = np.zeros((1, cells, cells), np.float32)
    offsets = np.zeros((8, cells, cells), np.float32)
    offset_weight = np.zeros((1, cells, cells), np.float32)
    heat_mask = np.float32(0.0 if sample.label == 'skip' else 1.0)
    species = sample.species
    label = CLASSES.index(species)
    if pets:
        pts = apply(matrix, key)
        centre, crop_side, _ = face_frame(*pts)
        radius = crop_side / 4
        c = centre / DETECTOR_STRIDE - 0.5
        sigma = max(0.8, radius / DETECTOR_STRIDE / 2.5)
        ys, xs = np.mgrid[0:cells, 0:cells]
        g = np.exp(-((xs - c[0]) ** 2 + (ys - c[1]) ** 2) / (2 * sigma**2)).astype(np.float32)
        ci = np.clip(np.round(c).astype(int), 0, cells - 1)
        g[ci[1], ci[0]] = 1.0
        heat[0] = g
        near = (np.abs(xs - c[0]) <= 1.5) & (np.abs(ys - c[1]) <= 1.5)
        # Offsets are learnt where the heatmap is high, in units of the face's own size.
        offset_weight[0] = near * g * (OFFSET_UNIT / max(radius, 6.0))
        cell_centres = np.stack([xs, ys]).astype(np.float32) * DETECTOR_STRIDE + DETECTOR_STRIDE / 2
        for k in range(4):
            offsets[2 * k : 2 * k + 2] = (pts[k][:, None, None] - cell_centres) / OFFSET_UNIT
    return {
        'image': to_tensor_array(image), 'label': np.int64(label), 'heat': heat, 'heat_mask': heat_mask,
        'offsets': offsets, 'offset_weight': offset_weight,
    }


LANDMARK_SIDE = 192
# Share of landmark crops turned at any angle (the rest within about ±10° of upright).
ANY_ANGLE_SHARE = 0.5
# Hidden points (estimated behind the head or under fur) count this much in the landmark loss.
HIDDEN_WEIGHT = 0.3


def landmark_crop(sample: Sample, rng: np.random.Generator | None) -> tuple[np.ndarray, bool]:
    """The crop map for a pet: the canonical crop of its annotated face, jittered like the detector's errors."""
    centre, side, angle = face_frame(*key_points(sample.points))
    mirror = False
    if rng is not None:
        # Half the crops at any angle: the first pass runs on the detector's frame, whose turn may be far off.
        angle += rng.uniform(-math.pi, math.pi) if rng.random() < ANY_ANGLE_SHARE else rng.normal(0, math.radians(10))
        side *= math.exp(rng.normal(0, 0.25))
        centre = centre + rng.normal(0, 0.08 * side, 2)
        mirror = rng.random() < 0.5
    matrix = crop_matrix(centre, side, angle, LANDMARK_SIDE)
    if mirror:
        matrix = np.array([[-1.0, 0, LANDMARK_SIDE], [0, 1.0, 0]]) @ np.vstack([matrix, [0, 0, 1]])
    return matrix, mirror


def left_of_axis(points: np.ndarray) -> bool:
    """Whether points[0] is the face's own left-hand eye as the picture shows it: left of the axis from the mouth up to
    the eyes' midpoint (the image-left eye of an upright face), a naming that turns with the face."""
    axis = points[:2].mean(0) - points[3]
    offset = points[0] - points[3]
    return axis[0] * offset[1] - axis[1] * offset[0] < 0 if np.abs(axis).sum() > 1e-6 else points[0, 0] <= points[1, 0]


def landmark_example(sample: Sample, rng: np.random.Generator | None, negative: bool = False) -> dict:
    """One crop for the landmark model: image S×S, heatmap targets with weights, and attributes."""
    h, w = sample.image.shape[:2]
    cells = LANDMARK_SIDE // LANDMARK_STRIDE
    heat = np.zeros((5, cells, cells), np.float32)
    coords = np.zeros((5, 2), np.float32)
    weights = np.zeros(5, np.float32)
    view, mouth_open, species = -1, -1.0, -1
    if negative:
        assert rng is not None
        side = rng.uniform(0.1, 0.7) * min(w, h)
        centre = rng.uniform([0, 0], [w, h])
        if sample.points is not None:
            # Away from the face: a crop of the body or background of a pet photo.
            face_centre, face_side, _ = face_frame(*key_points(sample.points))
            direction = rng.normal(0, 1, 2)
            centre = face_centre + direction / np.linalg.norm(direction) * (face_side + side) * rng.uniform(0.7, 1.2)
        matrix = crop_matrix(centre, side, rng.uniform(-math.pi, math.pi), LANDMARK_SIDE)
        face = 0.0
    else:
        matrix, _ = landmark_crop(sample, rng)
        pts = apply(matrix, sample.points)
        hidden = [k == sample.hidden_eye for k in range(2)] + [name in sample.hidden for name in ('nose', 'mouth', 'chin')]
        if not left_of_axis(pts):
            pts[[0, 1]] = pts[[1, 0]]
            hidden[0], hidden[1] = hidden[1], hidden[0]
        for k in range(5):
            inside = (-0.02 * LANDMARK_SIDE <= pts[k]).all() and (pts[k] <= 1.02 * LANDMARK_SIDE).all()
            if inside:
                weights[k] = HIDDEN_WEIGHT if hidden[k] else 1.0
        c = pts / LANDMARK_STRIDE - 0.5
        ys, xs = np.mgrid[0:cells, 0:cells]
        for k in range(5):
            g = np.exp(-((xs - c[k, 0]) ** 2 + (ys - c[k, 1]) ** 2) / (2 * 1.5**2))
            heat[k] = g / max(g.sum(), 1e-6)
        coords = pts.astype(np.float32)
        view = VIEWS.index(sample.view) if sample.view in VIEWS else -1
        mouth_open = float(sample.mouth_open)
        species = SPECIES.index(sample.label)
        face = 1.0
    image = warp(sample.image, matrix, LANDMARK_SIDE, LANDMARK_SIDE)
    if rng is not None:
        image = photometric(image, rng)
    return {
        'image': to_tensor_array(image), 'heat': heat, 'coords': coords, 'weights': weights,
        'view': np.int64(view), 'mouth_open': np.float32(mouth_open), 'face': np.float32(face), 'species': np.int64(species),
    }
