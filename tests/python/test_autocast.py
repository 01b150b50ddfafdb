"""Autocast: kiln.autocast as a context manager and a decorator, its scope
per thread, and Trainer(precision=...). Where the CPU runs no bf16, the
refusal must say so and the tests that need bf16 are skipped."""
import threading
import unittest

import numpy as np

import kiln
import support


def bf16_refusal():
    """None when this CPU runs bf16 products, else kiln's reason."""
    a = kiln.ones(2, 2, dtype=kiln.bfloat16)
    try:
        a @ a
        return None
    except kiln.Unsupported as e:
        return str(e)


REFUSAL = bf16_refusal()
needs_bf16 = unittest.skipIf(REFUSAL is not None, f"no bf16 on this CPU: {REFUSAL}")


class Scopes(unittest.TestCase):
    def test_nesting_and_the_current_dtype(self):
        self.assertEqual(kiln.autocast_dtype(), kiln.float32)
        with kiln.autocast("bf16"):
            self.assertEqual(kiln.autocast_dtype(), kiln.bfloat16)
            with kiln.autocast(kiln.float16):
                self.assertEqual(kiln.autocast_dtype(), kiln.float16)
            self.assertEqual(kiln.autocast_dtype(), kiln.bfloat16)
        self.assertEqual(kiln.autocast_dtype(), kiln.float32)

    def test_a_bad_dtype_names_it(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "f32.*KILN_BF16 or KILN_F16"):
            with kiln.autocast("f32"):
                pass
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown dtype 'f8'"):
            kiln.autocast("f8")
        self.assertEqual(kiln.autocast_dtype(), kiln.float32)

    def test_the_scope_closes_on_an_exception(self):
        with self.assertRaises(ZeroDivisionError):
            with kiln.autocast("bf16"):
                1 / 0
        self.assertEqual(kiln.autocast_dtype(), kiln.float32)

    def test_other_threads_and_runtimes_do_not_see_it(self):
        other = kiln.Runtime()
        seen = []
        with kiln.autocast("bf16"):
            thread = threading.Thread(target=lambda: seen.append(kiln.autocast_dtype()))
            thread.start()
            thread.join()
            self.assertEqual(kiln.autocast_dtype(other), kiln.float32)
        self.assertEqual(seen, [kiln.float32])


class Products(unittest.TestCase):
    @needs_bf16
    def test_products_run_in_bf16_and_gradients_stay_f32(self):
        rng = np.random.default_rng(0)
        x = kiln.tensor(rng.normal(size=(6, 16)).astype(np.float32))
        w = kiln.tensor(rng.normal(size=(16, 4)).astype(np.float32) * 0.3, requires_grad=True)
        with kiln.autocast("bf16"):
            y = x @ w
            loss = kiln.F.cross_entropy(y, kiln.tensor([0, 1, 2, 3, 0, 1]))
        self.assertEqual(y.dtype, kiln.bfloat16)
        self.assertEqual(loss.dtype, kiln.float32)
        loss.backward()
        self.assertEqual(w.grad.dtype, kiln.float32)
        np.testing.assert_allclose(y.to(kiln.float32).numpy(), x.numpy() @ w.numpy(), rtol=0.02, atol=0.05)
        self.assertEqual((x @ w).dtype, kiln.float32)  # off again

    @needs_bf16
    def test_as_a_decorator(self):
        @kiln.autocast("bf16")
        def forward(a, b):
            return a @ b

        self.assertEqual(forward(kiln.ones(2, 3), kiln.ones(3, 2)).dtype, kiln.bfloat16)
        self.assertEqual(kiln.autocast_dtype(), kiln.float32)


class Training(unittest.TestCase):
    def setup(self):
        rt = kiln.Runtime(seed=0, num_threads=1)
        inputs, targets = support.blobs(256)
        source = kiln.DataSource("tensors", input=inputs, target=targets, runtime=rt)
        train = kiln.Loader(source, batch_size=32, shuffle=True, seed=1)
        validation = kiln.Loader(source, batch_size=64)
        model = kiln.Sequential(kiln.layer("Linear", in_features=2, out_features=16, runtime=rt),
                                kiln.layer("ReLU", runtime=rt),
                                kiln.layer("Linear", in_features=16, out_features=2, runtime=rt), runtime=rt)
        return model, kiln.Optimizer("SGD", model, lr=0.1, momentum=0.9), train, validation

    @needs_bf16
    def test_a_trainer_learns_in_bf16(self):
        model, optimizer, train, validation = self.setup()
        steps = []
        trainer = kiln.Trainer(model, optimizer, train, validation=validation, epochs=3, progress="quiet",
                               precision="bf16", on_step=steps.append)
        trainer.run()
        after = trainer.evaluate()
        self.assertLess(np.mean([m.loss for m in steps[-8:]]), 0.5 * np.mean([m.loss for m in steps[:8]]))
        self.assertGreater(after.accuracy, 0.95)
        for name, p in model.parameters().items():
            self.assertEqual(p.dtype, kiln.float32, name)

    def test_a_bad_precision_is_refused(self):
        model, optimizer, train, _ = self.setup()
        with self.assertRaisesRegex(kiln.InvalidArgument, "options->precision is 'i32'"):
            kiln.Trainer(model, optimizer, train, epochs=1, progress="quiet", precision="int32")
        kiln.Trainer(model, optimizer, train, epochs=1, progress="quiet", precision="f32")


if __name__ == "__main__":
    support.main()
