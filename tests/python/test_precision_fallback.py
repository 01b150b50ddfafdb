"""Trainer(precision_fallback=True), run with oneDNN capped at AVX2 (CTest
sets DNNL_MAX_CPU_ISA), where the CPU computes no bf16: precision="bf16"
fails at creation saying why; with the fallback the runtime's log gets a
warning saying why and training runs in f32, to exactly the parameters of
an f32 run."""
import unittest

import numpy as np

import kiln
import support


def train(precision=None, precision_fallback=False, log=None):
    """The trained parameters (name -> array) of two epochs on the blobs."""
    rt = kiln.Runtime(seed=4, num_threads=1, log=log)
    inputs, targets = support.blobs(64)
    train_loader = kiln.Loader(kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt), batch_size=16)
    model = kiln.layer("Linear", in_features=2, out_features=2, runtime=rt)
    trainer = kiln.Trainer(model, kiln.Optimizer("SGD", model, lr=0.1), train_loader, epochs=2, progress="quiet",
                           precision=precision, precision_fallback=precision_fallback)
    trainer.run()
    return {name: p.numpy() for name, p in model.parameters().items()}


class PrecisionFallback(unittest.TestCase):
    def test_bf16_without_the_fallback_is_refused_at_creation(self):
        with self.assertRaisesRegex(kiln.Unsupported, r'options->precision is "bf16", but this CPU has no bf16 '
                                                      r'support.*precision_fallback'):
            train("bf16")

    def test_the_fallback_warns_and_trains_in_f32(self):
        warnings = []
        fallen = train("bf16", True, log=lambda level, message: warnings.append((level, message)))
        self.assertEqual(len(warnings), 1)
        self.assertEqual(warnings[0][0], kiln.LogLevel.WARNING)
        self.assertIn('options->precision "bf16" falls back to f32: this CPU has no bf16 support', warnings[0][1])
        f32 = train()
        self.assertEqual(fallen.keys(), f32.keys())
        for name in f32:
            np.testing.assert_array_equal(fallen[name], f32[name], err_msg=name)


if __name__ == "__main__":
    support.main()
