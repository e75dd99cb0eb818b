"""Losses of both networks."""
from __future__ import annotations

import torch
from torch.nn import functional as F


def centre_focal_loss(logits: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss; `mask` (per photo) leaves photos with an unannotated face out."""
    p = logits.sigmoid().clamp(1e-4, 1 - 1e-4)
    positive = target.eq(1).float()
    pos = -((1 - p) ** 2) * torch.log(p) * positive
    neg = -((1 - target) ** 4) * p**2 * torch.log(1 - p) * (1 - positive)
    m = mask.view(-1, 1, 1, 1)
    return ((pos + neg) * m).sum() / (positive * m).sum().clamp(min=1)


def offset_loss(pred: torch.Tensor, target: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return ((pred - target).abs() * weight).sum() / (weight > 0).float().sum().clamp(min=1) / 8


def soft_argmax(logits: torch.Tensor, stride: int) -> torch.Tensor:
    """Expected (x, y) of each channel's spatial softmax, in input pixels."""
    n, c, h, w = logits.shape
    p = logits.flatten(2).softmax(-1).view(n, c, h, w)
    xs = (torch.arange(w, dtype=logits.dtype) + 0.5) * stride
    ys = (torch.arange(h, dtype=logits.dtype) + 0.5) * stride
    return torch.stack([(p.sum(2) * xs).sum(-1), (p.sum(3) * ys).sum(-1)], -1)


def landmark_losses(heat_logits, attributes, batch, stride: int, radius: float) -> dict[str, torch.Tensor]:
    from .dataset import SPECIES, VIEWS

    weights = batch['weights']
    log_p = heat_logits.flatten(2).log_softmax(-1)
    heat = -(batch['heat'].flatten(2) * log_p).sum(-1)
    total_weight = weights.sum().clamp(min=1)
    coords = soft_argmax(heat_logits, stride)
    coord = ((coords - batch['coords']).abs().sum(-1) / radius * weights).sum() / total_weight
    v = len(VIEWS)
    view_logits, open_logit, face_logit, species_logits = attributes[:, :v], attributes[:, v], attributes[:, v + 1], attributes[:, v + 2 :]
    is_face = batch['face'] > 0.5
    losses = {
        'heat': (heat * weights).sum() / total_weight,
        'coord': coord,
        'face': F.binary_cross_entropy_with_logits(face_logit, batch['face']),
    }
    zero = attributes.sum() * 0
    losses['view'] = F.cross_entropy(view_logits, batch['view'], ignore_index=-1) if (batch['view'] >= 0).any() else zero
    open_known = batch['mouth_open'] >= 0
    losses['open'] = F.binary_cross_entropy_with_logits(open_logit[open_known], batch['mouth_open'][open_known]) if open_known.any() else zero
    losses['species'] = F.cross_entropy(species_logits, batch['species'], ignore_index=-1) if is_face.any() else zero
    assert len(SPECIES) == species_logits.shape[1]
    return losses
