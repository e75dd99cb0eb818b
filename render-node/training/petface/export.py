"""python -m petface.export [--checkpoints DIR] [--out DIR]: the trained networks as the ONNX files the render node loads.

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
from .dataset import CLASSES, IMAGENET_PET_CLASSES, CROP_SIDE_IN_RADII, MIN_RADIUS, SPECIES, VIEWS, default_data_dir, is_validation
from .nets import DETECTOR_STRIDE, LANDMARK_STRIDE, LANDMARKS, OFFSET_UNIT, Landmarks, load_detector
from .pipeline import DETECTOR_SIDE, PEAK_WINDOW

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--checkpoints', type=Path, default=Path(__file__).resolve().parents[1] / 'checkpoints')
    parser.add_argument('--out', type=Path, default=MODELS_DIR)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    detector = load_detector(args.checkpoints / 'detector.pt')
    detector.with_imagenet = True
    export(detector, DETECTOR_SIDE, ['classes', 'centre', 'offsets', 'imagenet'], {
        'petsing_face_stage': 'detector', 'input_side': str(DETECTOR_SIDE), 'stride': str(DETECTOR_STRIDE),
        'offset_unit': str(OFFSET_UNIT), 'classes': ','.join(CLASSES), 'fill': str(GREY[0]),
        'imagenet_pet_classes': ','.join(f'{a}-{b}' for a, b in IMAGENET_PET_CLASSES),
    }, args.out / 'petface-detector.onnx')

    landmarks = Landmarks(pretrained=False)
    landmarks.load_state_dict(torch.load(args.checkpoints / 'landmarks.pt', map_location='cpu'))
    export(landmarks, LANDMARK_SIDE, ['heatmaps', 'attributes'], {
        'petsing_face_stage': 'landmarks', 'input_side': str(LANDMARK_SIDE), 'stride': str(LANDMARK_STRIDE),
        'crop_side_in_radii': str(CROP_SIDE_IN_RADII), 'min_radius': str(MIN_RADIUS), 'peak_window': str(PEAK_WINDOW),
        'landmarks': ','.join(LANDMARKS), 'views': ','.join(VIEWS), 'species': ','.join(SPECIES),
        'attributes': ','.join(attribute_names()), 'fill': str(GREY[0]),
    }, args.out / 'petface-landmarks.onnx')
    annotations = json.loads((default_data_dir() / 'landmarks.json').read_text())
    held_out = [name for name in sorted(annotations) if is_validation(name) and annotations[name]['species'] != 'skip']
    (args.out / 'held-out.txt').write_text(''.join(f'{name}\n' for name in held_out))
    for name in ('petface-detector.onnx', 'petface-landmarks.onnx'):
        print(f'{args.out / name}: {(args.out / name).stat().st_size / 1e6:.1f} MB')


if __name__ == '__main__':
    main()
