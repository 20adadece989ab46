"""Exports torchvision's architectures to ONNX, with their input and PyTorch's
own output, for bench/zoo/run.sh.

The weights are random (torchvision's initialization from a fixed seed, and
batch-norm statistics drawn at random so that no layer is the identity): the
point is each architecture's operators and shapes, not its accuracy. PyTorch
and torchvision are Debian's (python3-torch, python3-torchvision; run with
/usr/bin/python3). Usage: export.py OUT_DIR [NAME...]
"""
import os
import sys

import numpy as np
import torch
import torchvision

MODELS = {
    # name: (constructor, input size)
    "densenet121": (torchvision.models.densenet121, 224),
    "shufflenet_v2_x1_0": (torchvision.models.shufflenet_v2_x1_0, 224),
    "googlenet": (lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True), 224),
    "inception_v3": (lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=True), 299),
    "resnext50_32x4d": (torchvision.models.resnext50_32x4d, 224),
    "regnet_y_400mf": (torchvision.models.regnet_y_400mf, 224),
    "mobilenet_v3_large": (torchvision.models.mobilenet_v3_large, 224),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, 224),
    "mnasnet1_0": (torchvision.models.mnasnet1_0, 224),
    "convnext_tiny": (torchvision.models.convnext_tiny, 224),
    "vgg11_bn": (torchvision.models.vgg11_bn, 224),
    "vit_b_16": (torchvision.models.vit_b_16, 224),
}


def randomize_batch_norm(model, generator):
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=generator) * 0.1)


def export(name, out_dir):
    make, size = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        randomize_batch_norm(model, generator)
        x = torch.randn(1, 3, size, size, generator=generator)
        y = model(x)
    path = os.path.join(out_dir, name)
    torch.onnx.export(model, x, path + ".onnx", opset_version=13, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    np.save(path + ".input.npy", x.numpy())
    np.save(path + ".expected.npy", y.numpy())
    print(name, tuple(y.shape))


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:] or MODELS:
        export(name, out_dir)


if __name__ == "__main__":
    main()
