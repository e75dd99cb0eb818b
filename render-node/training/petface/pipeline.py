"""Detection of a photo with both networks, exactly as the render node does it (render-node/src/pet-face-model.ts)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .augment import LANDMARK_SIDE, apply, letterbox_matrix, to_tensor_array, warp
from .dataset import CLASSES, SPECIES, VIEWS, crop_matrix, face_frame
from .nets import DETECTOR_STRIDE, LANDMARK_STRIDE, OFFSET_UNIT

DETECTOR_SIDE = 256
# Half-width of the window around a heatmap's peak whose weights refine the point.
PEAK_WINDOW = 2
# Face centres the landmark model may look at, best first: the detector's strongest heatmap peaks (local
# maxima of at least this share of the strongest). The next is tried only while none looked like a face.
CANDIDATES = 3
CANDIDATE_SHARE = 0.1
# A photo holds a pet when the detector's "a supported pet" probability and the landmark model's face score
# reach these (chosen on the held-out split: render-node/models/README.md). Exported into the ONNX metadata.
MIN_PET_PROBABILITY = 0.95
MIN_FACE_SCORE = 0.5


@dataclass
class Found:
    pet_probability: float
    face_score: float
    species: str
    species_probabilities: np.ndarray
    view: str
    mouth_open: float
    points: np.ndarray  # 5×2 photo pixels: eye, eye (left to right in the photo), nose, mouth, chin
    first_points: np.ndarray  # after the first landmark pass


def invert(matrix: np.ndarray) -> np.ndarray:
    return np.linalg.inv(np.vstack([matrix, [0, 0, 1]]))[:2]


def peak(channel: np.ndarray, stride: int) -> np.ndarray:
    """The channel's maximum refined by the softmax weights of its neighbourhood, in input pixels."""
    h, w = channel.shape
    j, i = divmod(int(channel.argmax()), w)
    y0, y1, x0, x1 = max(0, j - PEAK_WINDOW), min(h, j + PEAK_WINDOW + 1), max(0, i - PEAK_WINDOW), min(w, i + PEAK_WINDOW + 1)
    window = channel[y0:y1, x0:x1]
    weights = np.exp(window - window.max())
    weights /= weights.sum()
    ys, xs = np.mgrid[y0:y1, x0:x1]
    return np.array([(weights * xs).sum() + 0.5, (weights * ys).sum() + 0.5]) * stride


def run_detector(detector, photo: np.ndarray):
    h, w = photo.shape[:2]
    matrix = letterbox_matrix(w, h, DETECTOR_SIDE)
    image = warp(photo, matrix, DETECTOR_SIDE, DETECTOR_SIDE)
    detector.with_imagenet = False
    with torch.no_grad():
        logits, centre, offsets = detector(torch.from_numpy(to_tensor_array(image))[None])
    probs = logits.softmax(1)[0].numpy()
    heat = centre[0, 0].sigmoid().numpy()
    candidates = []
    for j, i in local_maxima(heat):
        cell = np.array([i, j]) * DETECTOR_STRIDE + DETECTOR_STRIDE / 2
        key = cell + offsets[0, :, j, i].numpy().reshape(4, 2) * OFFSET_UNIT
        candidates.append((float(heat[j, i]), apply(invert(matrix), key)))
    return probs, candidates


def local_maxima(heat: np.ndarray) -> list[tuple[int, int]]:
    """Cells that are the largest of their 3×3 neighbourhood, strongest first, at most CANDIDATES, all within CANDIDATE_SHARE of the best."""
    h, w = heat.shape
    padded = np.pad(heat, 1, constant_values=-1)
    neighbours = np.stack([padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)])
    peaks = np.argwhere(heat >= neighbours.max(0))
    order = sorted(((float(heat[j, i]), int(j), int(i)) for j, i in peaks), reverse=True)
    best = order[0][0]
    return [(j, i) for value, j, i in order[:CANDIDATES] if value >= CANDIDATE_SHARE * best]


def run_landmarks(landmarks, photo: np.ndarray, key: np.ndarray):
    matrix = crop_matrix(*face_frame(*key), LANDMARK_SIDE)
    image = warp(photo, matrix, LANDMARK_SIDE, LANDMARK_SIDE)
    with torch.no_grad():
        heat, attributes = landmarks(torch.from_numpy(to_tensor_array(image))[None])
    heat = heat[0].numpy()
    crop_points = np.stack([peak(heat[k], LANDMARK_STRIDE) for k in range(heat.shape[0])])
    points = apply(invert(matrix), crop_points)
    if points[0, 0] > points[1, 0]:
        points[[0, 1]] = points[[1, 0]]
    return points, attributes[0].numpy()


def quarter_turns(points: np.ndarray) -> int:
    """Clockwise quarter turns that bring the face's axis (eyes to mouth and chin) nearest to pointing down: 0 to 3."""
    down = (points[3] + points[4]) / 2 - points[:2].mean(0)
    return int(round(math.atan2(down[0], down[1]) / (math.pi / 2))) % 4


def face_score(attributes: np.ndarray) -> float:
    return float(1 / (1 + np.exp(-attributes[len(VIEWS) + 1])))


LANDMARK_PASSES = 3


def key_of(points: np.ndarray) -> np.ndarray:
    return np.stack([points[:2].mean(0), points[2], points[3], points[4]])


def look(detector, landmarks, photo: np.ndarray, turns: int, passes: int):
    """The detector on the photo turned clockwise by `turns` quarter turns, its candidates tried by the landmark model
    on the photo itself, the most face-like refined (`passes` in all): (face score, class probabilities, points,
    attributes, first-pass points)."""
    h, w = photo.shape[:2]
    probs, candidates = run_detector(detector, np.rot90(photo, -turns).copy())
    tried = []
    for _, key in candidates:
        key = unturn(key, turns, w, h)
        points, attributes = run_landmarks(landmarks, photo, key)
        tried.append((face_score(attributes), probs, points, attributes))
        if tried[-1][0] >= MIN_FACE_SCORE:
            break
    _, _, first, attributes = max(tried, key=lambda t: t[0])
    points = first
    for _ in range(passes - 1):
        points, attributes = run_landmarks(landmarks, photo, key_of(points))
    return face_score(attributes), probs, points, attributes, first


def unturn(points: np.ndarray, turns: int, w: int, h: int) -> np.ndarray:
    """Points of the photo turned clockwise `turns` times, back in the photo's own pixels."""
    for k in range(turns):
        # Undo one clockwise turn of an image whose size before that turn was (w, h) or (h, w).
        th = h if (turns - 1 - k) % 2 == 0 else w
        points = np.stack([points[:, 1], th - points[:, 0]], 1)
    return points


def detect(detector, landmarks, photo: np.ndarray, passes: int = LANDMARK_PASSES) -> Found:
    confidence = lambda found: found[0] * (1 - found[1][0])  # noqa: E731  face score × pet probability
    best = look(detector, landmarks, photo, 0, passes)
    turns = quarter_turns(best[2])
    if turns or best[0] < MIN_FACE_SCORE:
        # A head turned sideways or upside down, or no face where the detector looked: one more look with the photo
        # turned (so the head is upright, or upside down), as the detector has seen most pets upright. The surer wins.
        again = look(detector, landmarks, photo, turns or 2, passes)
        if confidence(again) >= confidence(best):
            best = again
    score, probs, points, attributes, first = best
    v = len(VIEWS)
    sigmoid = lambda x: float(1 / (1 + np.exp(-x)))  # noqa: E731
    species_logits = attributes[v + 2 :]
    crop_species = np.exp(species_logits - species_logits.max())
    crop_species /= crop_species.sum()
    species = (probs[1:] / max(probs[1:].sum(), 1e-6) + crop_species) / 2
    return Found(
        pet_probability=float(1 - probs[0]), face_score=score,
        species=SPECIES[int(species.argmax())], species_probabilities=species,
        view=VIEWS[int(attributes[:v].argmax())], mouth_open=sigmoid(attributes[v]), points=points, first_points=first,
    )


assert CLASSES[0] == 'none'
