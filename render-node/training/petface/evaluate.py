"""python -m petface.evaluate [--checkpoints DIR] [--passes 3]: both networks end to end, as the service runs them.

On the held-out split of ../shared/petfaces and on ../shared/pets (the development set, never trained on):
mouth error over the eye-midpoint-to-chin distance per species, species, refusals. Prints the scores of
no-pet photos and pets side by side, which is how the refusal thresholds were chosen.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from .dataset import SPECIES, Sample, default_data_dir, is_validation, load_samples
from .nets import Landmarks, load_detector
from .pipeline import LANDMARK_PASSES, MIN_FACE_SCORE, MIN_PET_PROBABILITY, detect

TOLERANCE = 0.35


def load_models(checkpoints: Path):
    detector, landmarks = load_detector(checkpoints / 'detector.pt'), Landmarks(pretrained=False)
    landmarks.load_state_dict(torch.load(checkpoints / 'landmarks.pt', map_location='cpu'))
    return detector.eval(), landmarks.eval()


def dev_samples(pets_dir: Path) -> list[Sample]:
    """../shared/pets in the training set's shape (its landmarks.json has no hidden/mouth_open fields)."""
    from PIL import Image

    from .dataset import CACHE_SIDE, load_photo

    annotations = json.loads((pets_dir / 'landmarks.json').read_text())
    samples = []
    for name, entry in sorted(annotations.items()):
        photo = load_photo(pets_dir / name)
        scale = min(1.0, CACHE_SIDE / max(photo.size))
        if scale < 1:
            photo = photo.resize((round(photo.width * scale), round(photo.height * scale)), Image.LANCZOS)
        sample = Sample(file=name, label=entry['species'], image=np.asarray(photo), scale=scale)
        if entry['species'] in SPECIES:
            sample.points = np.array([*entry['eyes'], entry['nose'], entry['mouth'], entry['chin']], np.float32) * scale
            sample.view = entry.get('view')
        samples.append(sample)
    return samples


def evaluate(detector, landmarks, samples: list[Sample], passes: int) -> list[dict]:
    rows = []
    for s in samples:
        found = detect(detector, landmarks, s.image, passes)
        row = {'file': s.file, 'label': s.label, 'pet': round(found.pet_probability, 3), 'face': round(found.face_score, 3),
               'species': found.species, 'view': found.view}
        if s.points is not None:
            unit = max(1.0, float(np.linalg.norm(s.points[:2].mean(0) - s.points[4])))
            row['mouth'] = round(float(np.linalg.norm(found.points[3] - s.points[3])) / unit, 3)
            row['mouth_first_pass'] = round(float(np.linalg.norm(found.first_points[3] - s.points[3])) / unit, 3)
            row['eyes'] = round(float(np.mean([np.linalg.norm(found.points[k] - s.points[k]) for k in range(2)])) / unit, 3)
            row['chin'] = round(float(np.linalg.norm(found.points[4] - s.points[4])) / unit, 3)
        rows.append(row)
    return rows


def summary(rows: list[dict], pet_threshold: float, face_threshold: float) -> dict:
    kept = lambda r: r['pet'] >= pet_threshold and r['face'] >= face_threshold  # noqa: E731
    pets = [r for r in rows if 'mouth' in r]
    none = [r for r in rows if r['label'] == 'none']
    result = {
        'pets': len(pets),
        'mouth_within': sum(kept(r) and r['mouth'] <= TOLERANCE for r in pets),
        'pets_refused': sum(not kept(r) for r in pets),
        'species_right': sum(r['species'] == r['label'] for r in pets),
        'none': len(none), 'none_refused': sum(not kept(r) for r in none),
        'per_species': {},
    }
    for species in SPECIES:
        group = [r for r in pets if r['label'] == species]
        if group:
            errors = np.array([r['mouth'] for r in group])
            result['per_species'][species] = {
                'photos': len(group), 'mouth_within': int(sum(kept(r) and r['mouth'] <= TOLERANCE for r in group)),
                'mouth_median': round(float(np.median(errors)), 3), 'refused': sum(not kept(r) for r in group),
                'species_right': sum(r['species'] == species for r in group),
            }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--checkpoints', type=Path, default=Path(__file__).resolve().parents[1] / 'checkpoints')
    parser.add_argument('--data', type=Path, default=default_data_dir())
    parser.add_argument('--pets', type=Path, default=default_data_dir().parent / 'pets')
    parser.add_argument('--passes', type=int, default=LANDMARK_PASSES)
    parser.add_argument('--pet-threshold', type=float, default=MIN_PET_PROBABILITY)
    parser.add_argument('--face-threshold', type=float, default=MIN_FACE_SCORE)
    parser.add_argument('--out', type=Path, default=None)
    parser.add_argument('--limit', type=int, default=0, help='only the first N photos of each set (a quick check that it runs)')
    args = parser.parse_args()
    torch.set_num_threads(2)
    detector, landmarks = load_models(args.checkpoints)
    annotations = json.loads((args.data / 'landmarks.json').read_text())
    held_out = [n for n in sorted(annotations) if is_validation(n) and annotations[n]['species'] != 'skip']
    sets = (('held_out', load_samples(args.data, held_out[: args.limit or None])), ('dev', dev_samples(args.pets)[: args.limit or None]))
    report = {}
    for name, samples in sets:
        rows = evaluate(detector, landmarks, samples, args.passes)
        report[name] = {'summary': summary(rows, args.pet_threshold, args.face_threshold), 'rows': rows}
        print(f'== {name}: {json.dumps(report[name]["summary"])}')
        for r in rows:
            flag = '' if r['label'] == 'none' else ('' if r['mouth'] <= TOLERANCE else '  MOUTH OFF')
            print(f"  {r['file'][:48]:48} {r['label']:10} pet {r['pet']:.2f} face {r['face']:.2f} {r['species']:10} {r['view']:13} "
                  f"mouth {r.get('mouth', float('nan')):.2f} (1st {r.get('mouth_first_pass', float('nan')):.2f}){flag}")
        none = sorted((r['pet'], r['face']) for r in rows if r['label'] == 'none')
        pets = sorted((r['pet'], r['face']) for r in rows if r['label'] != 'none')
        print(f'  no-pet scores (pet, face): {none}')
        print(f'  lowest pet scores: {pets[:12]}')
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == '__main__':
    main()
