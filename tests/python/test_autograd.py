"""Autograd: requires_grad, backward, gradients, no_grad."""
import threading
import unittest

import numpy as np

import kiln
import support


class Backward(unittest.TestCase):
    def test_gradients_of_a_matmul(self):
        x = kiln.tensor([[1.0, 2.0]], requires_grad=True)
        w = kiln.tensor([[3.0], [4.0]], requires_grad=True)
        self.assertTrue(x.requires_grad)
        self.assertIsNone(x.grad)
        (x @ w).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [[3.0, 4.0]])
        np.testing.assert_array_equal(w.grad.numpy(), [[1.0], [2.0]])

    def test_gradients_accumulate_until_zeroed(self):
        x = kiln.tensor([1.0, -2.0]).requires_grad_()
        for _ in range(2):
            (x * x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [4.0, -8.0])
        x.zero_grad()
        self.assertIsNone(x.grad)

    def test_a_seed_gradient(self):
        x = kiln.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2.0
        kiln.backward(y, np.array([1.0, 10.0, 100.0], np.float32))
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 20.0, 200.0])

    def test_a_graph_is_freed_unless_retained(self):
        x = kiln.tensor([3.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        np.testing.assert_array_equal(x.grad.numpy(), [12.0])
        with self.assertRaisesRegex(kiln.InvalidState, "pass retain_graph=true to that backward"):
            y.backward()

    def test_only_floating_tensors_take_gradients(self):
        with self.assertRaises(kiln.Error) as caught:
            kiln.tensor([1, 2]).requires_grad = True
        self.assertIn("i64", str(caught.exception))

    def test_detach_cuts_the_graph(self):
        x = kiln.tensor([2.0], requires_grad=True)
        d = (x * 3.0).detach()
        self.assertFalse(d.requires_grad)
        np.testing.assert_array_equal(d.numpy(), [6.0])


class NoGrad(unittest.TestCase):
    def test_context_manager(self):
        x = kiln.tensor([1.0], requires_grad=True)
        self.assertTrue(kiln.grad_enabled())
        with kiln.no_grad():
            self.assertFalse(kiln.grad_enabled())
            with kiln.no_grad():  # scopes nest
                pass
            self.assertFalse(kiln.grad_enabled())
            self.assertFalse((x * 2.0).requires_grad)
        self.assertTrue(kiln.grad_enabled())
        self.assertTrue((x * 2.0).requires_grad)

    def test_decorator(self):
        @kiln.no_grad()
        def evaluate(t):
            return kiln.grad_enabled(), (t * 2.0).requires_grad

        self.assertEqual(evaluate(kiln.tensor([1.0], requires_grad=True)), (False, False))
        self.assertTrue(kiln.grad_enabled())

    def test_per_runtime_and_per_thread(self):
        other = kiln.Runtime()
        seen = {}
        with kiln.no_grad():
            self.assertTrue(kiln.grad_enabled(other))
            thread = threading.Thread(target=lambda: seen.setdefault("enabled", kiln.grad_enabled()))
            thread.start()
            thread.join()
        self.assertTrue(seen["enabled"])


if __name__ == "__main__":
    support.main()
