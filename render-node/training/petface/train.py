"""python -m petface.train [--stage detector|landmarks|all] [--epochs N] [--landmark-epochs N] [--limit N] [--out DIR]

Trains the detector and the landmark model on ../shared/petfaces (the fixed split keeps VALIDATION_SHARE of
every species out), evaluates them on the held-out photos, and writes checkpoints to --out.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from .augment import detector_example, landmark_example
from .dataset import CLASSES, Sample, default_data_dir, is_validation, load_samples
from .losses import centre_focal_loss, landmark_losses, offset_loss
from .nets import LANDMARK_STRIDE, Detector, Landmarks, Teacher
from .augment import LANDMARK_SIDE
from .dataset import CROP_SIDE_IN_RADII

DETECTOR_SIDE = 256
# The no-pet photos are a sixth of the set; each is seen this many times an epoch.
NONE_REPEAT = 3
# Share of landmark-model examples that are crops with no face (no-pet photos, or away from the face).
NEGATIVE_SHARE = 0.25


class DetectorSet(Dataset):
    def __init__(self, samples: list[Sample], train: bool):
        self.samples = [s for s in samples for _ in range(NONE_REPEAT if train and s.label == 'none' else 1)]
        self.train = train

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        rng = np.random.default_rng() if self.train else None
        return detector_example(self.samples[i], rng, DETECTOR_SIDE)


class LandmarkSet(Dataset):
    def __init__(self, samples: list[Sample], train: bool):
        self.faces = [s for s in samples if s.points is not None]
        self.others = [s for s in samples if s.label in ('none',) or s.points is not None]
        self.train = train
        self.negatives = round(len(self.faces) * NEGATIVE_SHARE / (1 - NEGATIVE_SHARE)) if train else 0

    def __len__(self):
        return len(self.faces) + self.negatives

    def __getitem__(self, i):
        if i < len(self.faces):
            return landmark_example(self.faces[i], np.random.default_rng() if self.train else None)
        rng = np.random.default_rng()
        return landmark_example(self.others[rng.integers(len(self.others))], rng, negative=True)


def seed_workers(worker_id: int) -> None:
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


def param_groups(model: torch.nn.Module, lr: float):
    backbone = [p for n, p in model.named_parameters() if n.startswith('backbone.') and p.requires_grad]
    heads = [p for n, p in model.named_parameters() if not n.startswith('backbone.')]
    return [{'params': backbone, 'lr': lr * 0.5}, {'params': heads, 'lr': lr}]


def freeze(model) -> None:
    for part in model.backbone.frozen_parts():
        for p in part.parameters():
            p.requires_grad = False


def set_train(model) -> None:
    model.train()
    for part in model.backbone.frozen_parts():
        part.eval()


def fit(model, loader, epochs: int, lr: float, step_losses, log, evaluate, checkpoint: Path) -> None:
    freeze(model)
    model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(param_groups(model, lr), weight_decay=1e-4)
    total = epochs * len(loader)
    warmup = min(len(loader), total // 10 + 1)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda k: (k + 1) / warmup if k < warmup else 0.5 * (1 + math.cos(math.pi * (k - warmup) / max(1, total - warmup))))
    for epoch in range(epochs):
        set_train(model)
        started, sums, count = time.time(), {}, 0
        for batch in loader:
            batch['image'] = batch['image'].contiguous(memory_format=torch.channels_last)
            losses = step_losses(model, batch)
            loss = sum(losses.values())
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            schedule.step()
            for k, v in losses.items():
                sums[k] = sums.get(k, 0.0) + v.item()
            count += 1
        summary = {k: round(v / max(count, 1), 4) for k, v in sums.items()}
        log(f'epoch {epoch + 1}/{epochs} {time.time() - started:.0f}s {summary}')
        if epoch + 1 == epochs or (epoch + 1) % 5 == 0:
            torch.save(model.state_dict(), checkpoint)
            log(f'  validation: {evaluate(model)}')


# Temperature and weight of the ImageNet teacher's soft targets (learning without forgetting).
DISTILL_TEMPERATURE = 2.0
DISTILL_WEIGHT = 1.0


def detector_losses_with(teacher):
    def losses(model, batch):
        model.with_imagenet = teacher is not None
        outputs = model(batch['image'])
        logits, centre, offsets = outputs[:3]
        result = {
            'class': torch.nn.functional.cross_entropy(logits, batch['label'], label_smoothing=0.05),
            'centre': centre_focal_loss(centre, batch['heat'], batch['heat_mask']),
            'offsets': offset_loss(offsets, batch['offsets'], batch['offset_weight']),
        }
        if teacher is not None:
            t = DISTILL_TEMPERATURE
            target = (teacher(batch['image']) / t).softmax(1)
            result['imagenet'] = DISTILL_WEIGHT * t * t * torch.nn.functional.kl_div((outputs[3] / t).log_softmax(1), target, reduction='batchmean')
        return result

    return losses


def landmark_step_losses(model, batch):
    heat, attributes = model(batch['image'])
    losses = landmark_losses(heat, attributes, batch, LANDMARK_STRIDE, LANDMARK_SIDE / CROP_SIDE_IN_RADII)
    losses['coord'] = losses['coord'] * 0.5
    return losses


def evaluate_detector(model, samples: list[Sample]) -> dict:
    from .pipeline import run_detector

    model.eval()
    model.with_imagenet = False
    right, refused_none, none, pets, refused_pets, errors = 0, 0, 0, 0, 0, []
    for s in samples:
        probs, candidates = run_detector(model, s.image)
        key = candidates[0][1]
        guess = int(probs.argmax())
        if s.label == 'none':
            none += 1
            refused_none += guess == 0
        elif s.points is not None:
            pets += 1
            refused_pets += guess == 0
            right += guess == CLASSES.index(s.label)
            unit = float(np.linalg.norm(s.points[:2].mean(0) - s.points[4]))
            errors.append(float(np.linalg.norm(key[2] - s.points[3])) / max(unit, 1))
    errors = np.array(errors) if errors else np.array([np.nan])
    return {
        'species_right': f'{right}/{pets}', 'pets_refused': f'{refused_pets}/{pets}', 'none_refused': f'{refused_none}/{none}',
        'mouth_median': round(float(np.median(errors)), 3), 'mouth_within_0.35': f'{int((errors <= 0.35).sum())}/{len(errors)}',
    }


def evaluate_landmarks(model, samples: list[Sample]) -> dict:
    model.eval()
    data = LandmarkSet(samples, train=False)
    errors = []
    with torch.no_grad():
        for i in range(len(data)):
            ex = data[i]
            heat, _ = model(torch.from_numpy(ex['image'])[None])
            from .pipeline import peak

            mouth = peak(heat[0, 3].numpy(), LANDMARK_STRIDE)
            pts = ex['coords']
            unit = float(np.linalg.norm(pts[:2].mean(0) - pts[4]))
            errors.append(float(np.linalg.norm(mouth - pts[3])) / max(unit, 1))
    errors = np.array(errors) if errors else np.array([np.nan])
    return {'mouth_median': round(float(np.median(errors)), 3), 'mouth_within_0.35': f'{int((errors <= 0.35).sum())}/{len(errors)}'}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--stage', choices=['detector', 'landmarks', 'all'], default='all', help='which network to train (all: the landmark model first)')
    # The defaults trained the committed files (render-node/models/README.md).
    parser.add_argument('--epochs', type=int, default=22, help="the detector's epochs")
    parser.add_argument('--landmark-epochs', type=int, default=30)
    parser.add_argument('--limit', type=int, default=0, help='use only this many photos (a quick check that training runs)')
    parser.add_argument('--batch', type=int, default=32)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--workers', type=int, default=1)
    parser.add_argument('--data', type=Path, default=default_data_dir())
    parser.add_argument('--out', type=Path, default=Path(__file__).resolve().parents[1] / 'checkpoints')
    parser.add_argument('--no-pretrained', action='store_true')
    parser.add_argument('--no-distill', action='store_true', help="train the detector without the ImageNet teacher")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    args.out.mkdir(parents=True, exist_ok=True)
    log_file = (args.out / 'train.log').open('a')

    def log(line: str) -> None:
        print(line, flush=True)
        log_file.write(line + '\n')
        log_file.flush()

    annotations = json.loads((args.data / 'landmarks.json').read_text())
    names = sorted(annotations)
    if args.limit:
        names = names[:: max(1, len(names) // args.limit)][: args.limit]
    started = time.time()
    samples = load_samples(args.data, names)
    train = [s for s in samples if not is_validation(s.file)]
    held_out = [s for s in samples if is_validation(s.file)]
    log(f'{len(samples)} photos loaded in {time.time() - started:.0f}s: {len(train)} to train on, {len(held_out)} held out')

    loader_options = dict(batch_size=args.batch, shuffle=True, drop_last=len(train) > args.batch, num_workers=args.workers,
                          worker_init_fn=seed_workers, persistent_workers=args.workers > 0)
    pretrained = not args.no_pretrained
    if args.stage in ('landmarks', 'all'):
        model = Landmarks(pretrained)
        loader = DataLoader(LandmarkSet(train, True), **loader_options)
        fit(model, loader, args.landmark_epochs, args.lr, landmark_step_losses, log,
            lambda m: evaluate_landmarks(m, held_out), args.out / 'landmarks.pt')
    if args.stage in ('detector', 'all'):
        model = Detector(pretrained)
        teacher = Teacher().to(memory_format=torch.channels_last) if pretrained and not args.no_distill else None
        loader = DataLoader(DetectorSet(train, True), **loader_options)
        fit(model, loader, args.epochs, args.lr, detector_losses_with(teacher), log, lambda m: evaluate_detector(m, held_out), args.out / 'detector.pt')
    log(f'done in {time.time() - started:.0f}s')


if __name__ == '__main__':
    main()
