"""Detection of a photo with both networks, exactly as the render node does it (render-node/src/pet-face-model.ts)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .augment import LANDMARK_SIDE, apply, letterbox_matrix, to_tensor_array, warp
from .dataset import CLASSES, IMAGENET_PET_CLASSES, SPECIES, VIEWS, crop_matrix, face_frame
from .nets import DETECTOR_STRIDE, LANDMARK_STRIDE, OFFSET_UNIT

DETECTOR_SIDE = 256
# Half-width of the window around a heatmap's peak whose weights refine the point.
PEAK_WINDOW = 2
# Face centres the landmark model may look at, best first: the detector's strongest heatmap peaks (local
# maxima of at least this share of the strongest). The next is tried only while none looked like a face.
CANDIDATES = 3
CANDIDATE_SHARE = 0.1
MIN_FACE_SCORE = 0.5


@dataclass
class Found:
    pet_probability: float
    imagenet_pet: float  # the share of the ImageNet head's belief on pet classes
    centre_score: float
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


def imagenet_pet_share(logits: torch.Tensor) -> float:
    probs = logits.softmax(-1).flatten()
    return float(sum(probs[a : b + 1].sum() for a, b in IMAGENET_PET_CLASSES))


def run_detector(detector, photo: np.ndarray, with_imagenet: bool = False):
    h, w = photo.shape[:2]
    matrix = letterbox_matrix(w, h, DETECTOR_SIDE)
    image = warp(photo, matrix, DETECTOR_SIDE, DETECTOR_SIDE)
    detector.with_imagenet = with_imagenet
    with torch.no_grad():
        outputs = detector(torch.from_numpy(to_tensor_array(image))[None])
    logits, centre, offsets = outputs[:3]
    probs = logits.softmax(1)[0].numpy()
    heat = centre[0, 0].sigmoid().numpy()
    candidates = []
    for j, i in local_maxima(heat):
        cell = np.array([i, j]) * DETECTOR_STRIDE + DETECTOR_STRIDE / 2
        key = cell + offsets[0, :, j, i].numpy().reshape(4, 2) * OFFSET_UNIT
        candidates.append((float(heat[j, i]), apply(invert(matrix), key)))
    found = probs, candidates
    return found + (imagenet_pet_share(outputs[3]),) if with_imagenet else found


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


def detect(detector, landmarks, photo: np.ndarray, passes: int = 2) -> Found:
    probs, candidates, imagenet_pet = run_detector(detector, photo, with_imagenet=True)
    tried = []
    for centre_score, key in candidates:
        points, attributes = run_landmarks(landmarks, photo, key)
        tried.append((face_score(attributes), centre_score, points, attributes))
        if tried[-1][0] >= MIN_FACE_SCORE:
            break
    _, centre_score, points, attributes = max(tried, key=lambda t: t[0])
    first = points
    for _ in range(passes - 1):
        points, attributes = run_landmarks(landmarks, photo, np.stack([points[:2].mean(0), points[2], points[3], points[4]]))
    turns = quarter_turns(points)
    if turns:
        # A head turned sideways or upside down: the photo is asked again turned so the head is upright, as the
        # classifier has seen most pets.
        probs, _, imagenet_pet = run_detector(detector, np.rot90(photo, -turns).copy(), with_imagenet=True)
    v = len(VIEWS)
    sigmoid = lambda x: float(1 / (1 + np.exp(-x)))  # noqa: E731
    species_logits = attributes[v + 2 :]
    crop_species = np.exp(species_logits - species_logits.max())
    crop_species /= crop_species.sum()
    species = (probs[1:] / max(probs[1:].sum(), 1e-6) + crop_species) / 2
    return Found(
        pet_probability=float(1 - probs[0]), imagenet_pet=imagenet_pet, centre_score=centre_score, face_score=sigmoid(attributes[v + 1]),
        species=SPECIES[int(species.argmax())], species_probabilities=species,
        view=VIEWS[int(attributes[:v].argmax())], mouth_open=sigmoid(attributes[v]), points=points, first_points=first,
    )


assert CLASSES[0] == 'none'
