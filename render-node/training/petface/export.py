"""python -m petface.export [--stage detector|landmarks|all] [--checkpoints DIR] [--out DIR]: the trained networks as the
ONNX files the render node loads (--stage: only the network retrained, the other file left as it is).

Each file carries in its metadata what the service needs to feed it and read it (sizes, strides, class and
landmark names), so the TypeScript side has no copy of these constants.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import onnx
import torch

from .augment import GREY, LANDMARK_SIDE
from .dataset import CLASSES, CROP_SIDE_IN_RADII, MIN_RADIUS, SPECIES, VIEWS, default_data_dir, is_validation
from .nets import DETECTOR_STRIDE, LANDMARK_STRIDE, LANDMARKS, OFFSET_UNIT, Landmarks, load_detector
from .pipeline import DETECTOR_SIDE, MIN_FACE_SCORE, MIN_PET_PROBABILITY, PEAK_WINDOW

MODELS_DIR = Path(__file__).resolve().parents[2] / 'models'
OPSET = 17


def attribute_names() -> list[str]:
    return [f'view:{v}' for v in VIEWS] + ['mouth_open', 'face'] + [f'species:{s}' for s in SPECIES]


def export(model: torch.nn.Module, side: int, outputs: list[str], metadata: dict[str, str], path: Path) -> None:
    model.eval()
    example = torch.rand(1, 3, side, side)
    torch.onnx.export(model, (example,), str(path), input_names=['image'], output_names=outputs, opset_version=OPSET, dynamo=False)
    proto = onnx.load(str(path))
    weights = hashlib.sha256(b''.join(t.raw_data for t in proto.graph.initializer)).hexdigest()[:12]
    for key, value in {**metadata, 'model_version': f'{metadata["petsing_face_stage"]}-{weights}'}.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    proto.producer_name = 'petsing render-node/training'
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))


def export_detector(checkpoint: Path, out: Path) -> None:
    detector = load_detector(checkpoint)
    detector.with_imagenet = False  # the ImageNet head only carries the teacher's knowledge during training
    export(detector, DETECTOR_SIDE, ['classes', 'centre', 'offsets'], {
        'petsing_face_stage': 'detector', 'input_side': str(DETECTOR_SIDE), 'stride': str(DETECTOR_STRIDE),
        'offset_unit': str(OFFSET_UNIT), 'classes': ','.join(CLASSES), 'fill': str(GREY[0]),
        'min_pet_probability': str(MIN_PET_PROBABILITY),
    }, out / 'petface-detector.onnx')


def export_landmarks(checkpoint: Path, out: Path) -> None:
    landmarks = Landmarks(pretrained=False)
    landmarks.load_state_dict(torch.load(checkpoint, map_location='cpu'))
    export(landmarks, LANDMARK_SIDE, ['heatmaps', 'attributes'], {
        'petsing_face_stage': 'landmarks', 'input_side': str(LANDMARK_SIDE), 'stride': str(LANDMARK_STRIDE),
        'crop_side_in_radii': str(CROP_SIDE_IN_RADII), 'min_radius': str(MIN_RADIUS), 'peak_window': str(PEAK_WINDOW),
        'landmarks': ','.join(LANDMARKS), 'views': ','.join(VIEWS), 'species': ','.join(SPECIES),
        'attributes': ','.join(attribute_names()), 'fill': str(GREY[0]), 'min_face_score': str(MIN_FACE_SCORE),
    }, out / 'petface-landmarks.onnx')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--checkpoints', type=Path, default=Path(__file__).resolve().parents[1] / 'checkpoints')
    parser.add_argument('--out', type=Path, default=MODELS_DIR)
    parser.add_argument('--stage', choices=['detector', 'landmarks', 'all'], default='all')
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.stage in ('detector', 'all'):
        export_detector(args.checkpoints / 'detector.pt', args.out)
    if args.stage in ('landmarks', 'all'):
        export_landmarks(args.checkpoints / 'landmarks.pt', args.out)
    annotations = json.loads((default_data_dir() / 'landmarks.json').read_text())
    held_out = [name for name in sorted(annotations) if is_validation(name) and annotations[name]['species'] != 'skip']
    (args.out / 'held-out.txt').write_text(''.join(f'{name}\n' for name in held_out))
    for name in ('petface-detector.onnx', 'petface-landmarks.onnx'):
        print(f'{args.out / name}: {(args.out / name).stat().st_size / 1e6:.1f} MB')


if __name__ == '__main__':
    main()
