#!/usr/bin/python3
"""Generate a shape-only ResNet-18 training-loss ONNX graph (no weights).

The graph mirrors what ``torch.onnx.export`` (opset 17, ``export_params=False``,
``training=TrainingMode.TRAINING``) produces for torchvision's ``resnet18``
followed by a mean ``SoftmaxCrossEntropyLoss``:

* every parameter is a graph *input* with its full static shape, named by its
  state-dict key and with ``doc_string`` ``role=parameter``; the batch-norm
  running statistics are inputs with ``role=buffer``;
* each batch norm is ``BatchNormalization`` with ``training_mode=1`` and
  ``momentum=0.9`` (PyTorch's 0.1), returning the updated running statistics;
* a BasicBlock is ``Conv -> BN -> Relu -> Conv -> BN -> Add(identity) ->
  Relu``, the identity being ``Conv(1x1, stride 2) -> BN`` where the block
  downsamples;
* the head is ``GlobalAveragePool -> Flatten -> Gemm``;
* node names are scoped the way PyTorch scopes them, e.g.
  ``/layer2/layer2.0/downsample/downsample.0/Conv``, so a planner can find
  blocks.

Nothing here needs weights: the model can be planned, never run.

Usage:
    /usr/bin/python3 tools/bench/make_resnet_shape.py              # batch 32, 224 x 224
    /usr/bin/python3 tools/bench/make_resnet_shape.py --batch 8 --image 112 -o resnet_small.onnx

Needs the ``onnx`` Python package (Debian: python3-onnx) and numpy.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from make_llama_shape import REPO, Builder, check

DEFAULT_OUT = os.path.join(REPO, "tests", "models", "scale", "resnet18_shape.onnx")


class ResNetBuilder(Builder):
    def conv(self, scope, x, weight_name, c_in, c_out, kernel, stride, pad):
        w = self.param(weight_name, [c_out, c_in, kernel, kernel])
        return self.node(scope, "Conv", [x, w], dilations=[1, 1], group=1,
                         kernel_shape=[kernel, kernel], pads=[pad] * 4,
                         strides=[stride, stride])

    def batch_norm(self, scope, x, prefix, channels):
        scale = self.param(f"{prefix}.weight", [channels])
        bias = self.param(f"{prefix}.bias", [channels])
        mean = self.add_input(f"{prefix}.running_mean", TensorProto.FLOAT, [channels], "buffer")
        var = self.add_input(f"{prefix}.running_var", TensorProto.FLOAT, [channels], "buffer")
        y, _, _ = self.node(scope, "BatchNormalization", [x, scale, bias, mean, var], n_out=3,
                            epsilon=1e-5, momentum=0.9, training_mode=1)
        return y

    def basic_block(self, scope, x, prefix, c_in, c_out, stride):
        h = self.conv(f"{scope}/conv1", x, f"{prefix}.conv1.weight", c_in, c_out, 3, stride, 1)
        h = self.batch_norm(f"{scope}/bn1", h, f"{prefix}.bn1", c_out)
        h = self.node(f"{scope}/relu", "Relu", [h])
        h = self.conv(f"{scope}/conv2", h, f"{prefix}.conv2.weight", c_out, c_out, 3, 1, 1)
        h = self.batch_norm(f"{scope}/bn2", h, f"{prefix}.bn2", c_out)
        identity = x
        if stride != 1 or c_in != c_out:
            d = f"{scope}/downsample"
            identity = self.conv(f"{d}/downsample.0", x, f"{prefix}.downsample.0.weight",
                                 c_in, c_out, 1, stride, 0)
            identity = self.batch_norm(f"{d}/downsample.1", identity,
                                       f"{prefix}.downsample.1", c_out)
        h = self.node(scope, "Add", [h, identity])
        return self.node(f"{scope}/relu_1", "Relu", [h])


def build(batch=32, image=224, classes=1000, blocks=(2, 2, 2, 2)):
    b = ResNetBuilder()
    x = b.add_input("input", TensorProto.FLOAT, [batch, 3, image, image], "data")
    tgt = b.add_input("targets", TensorProto.INT64, [batch], "targets")

    h = b.conv("/conv1", x, "conv1.weight", 3, 64, 7, 2, 3)
    h = b.batch_norm("/bn1", h, "bn1", 64)
    h = b.node("/relu", "Relu", [h])
    h = b.node("/maxpool", "MaxPool", [h], ceil_mode=0, dilations=[1, 1],
               kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    c_in = 64
    for stage, (count, width) in enumerate(zip(blocks, (64, 128, 256, 512)), start=1):
        for i in range(count):
            stride = 2 if stage > 1 and i == 0 else 1
            h = b.basic_block(f"/layer{stage}/layer{stage}.{i}", h, f"layer{stage}.{i}",
                              c_in, width, stride)
            c_in = width
    h = b.node("/avgpool", "GlobalAveragePool", [h])
    h = b.node("", "Flatten", [h], axis=1)
    w = b.param("fc.weight", [classes, c_in])
    bias = b.param("fc.bias", [classes])
    logits = b.node("/fc", "Gemm", [h, w, bias], alpha=1.0, beta=1.0, transB=1)
    loss_node = helper.make_node("SoftmaxCrossEntropyLoss", [logits, tgt], ["loss"],
                                 name="/SoftmaxCrossEntropyLoss", reduction="mean",
                                 ignore_index=-100)
    b.nodes.append(loss_node)

    order = {"data": 0, "targets": 1, "buffer": 2, "parameter": 3}
    inputs = sorted(b.inputs, key=lambda vi: order[vi.doc_string.split("=")[1]])
    out = helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])
    graph = helper.make_graph(b.nodes, "resnet18_shape_loss", inputs, [out])
    graph.doc_string = (f"ResNet-18-shaped training loss (shape-only, no weights): "
                        f"batch={batch} image={image} classes={classes} parameters={b.params}")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="remat tools/bench/make_resnet_shape.py")
    model.ir_version = 8
    return model, b.params


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=DEFAULT_OUT,
                    help=f"output path (default {os.path.relpath(DEFAULT_OUT, REPO)})")
    ap.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    ap.add_argument("--image", type=int, default=224, help="image height and width (default 224)")
    args = ap.parse_args()

    model, params = build(batch=args.batch, image=args.image)
    shapes = check(model)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    onnx.save(model, args.output)
    largest = max(shapes.items(), key=lambda kv: int(np.prod(kv[1])))
    print(f"wrote {args.output}: {len(model.graph.node)} nodes, {len(model.graph.input)} inputs, "
          f"{params:,} parameters, {os.path.getsize(args.output):,} bytes; "
          f"largest value {largest[0]} {largest[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
