"""How often real code constructs each ``torch.nn`` class of ``module_db``.

Counted by hand in a fixed sample of eight well-known public model files, as the number of
places that construct the class (``nn.X(...)``, or ``nn.X`` passed as the layer factory, as in
``norm_layer = nn.BatchNorm2d``): pytorch/examples ``word_language_model/model.py``,
``dcgan/main.py`` and ``fast_neural_style/neural_style/transformer_net.py``; pytorch/vision
``torchvision/models/resnet.py`` and ``mobilenetv3.py``; karpathy/nanoGPT ``model.py``;
milesial/Pytorch-UNet ``unet/unet_parts.py``; lucidrains/vit-pytorch ``vit_pytorch/vit.py``.
Classes outside module_db (Sequential, Dropout, Identity, Upsample, ...) are left out, and so
are classes the sample never constructs. A small sample: the weighted figure it gives is a
rough guide to what a tutorial or a classic model needs, not a measurement of all code.
"""

from __future__ import annotations

CALLS: dict[str, int] = {
    "Linear": 16,
    "Conv2d": 15,
    "BatchNorm2d": 13,
    "ReLU": 13,
    "InstanceNorm2d": 7,
    "ConvTranspose2d": 6,
    "LayerNorm": 5,
    "Embedding": 4,
    "LeakyReLU": 4,
    "Hardswish": 4,
    "GELU": 2,
    "MaxPool2d": 2,
    "AdaptiveAvgPool2d": 2,
    "ReflectionPad2d": 2,
    "BCELoss": 1,
    "GRU": 1,
    "LSTM": 1,
    "RNN": 1,
    "Sigmoid": 1,
    "Softmax": 1,
    "Tanh": 1,
    "Transformer": 1,
}
