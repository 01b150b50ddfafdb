"""Optimizers (groups, hyper-parameters, steps, state) and learning-rate schedules."""
import unittest

import numpy as np

import kiln
import support


def quadratic_step(optimizer, params):
    """Gradients of sum(p^2) (2p), then one optimizer step."""
    optimizer.zero_grad()
    sum((p * p).sum() for p in params).backward()
    optimizer.step()


class Optimizers(unittest.TestCase):
    def test_sgd_step(self):
        p = kiln.tensor([1.0, -2.0], requires_grad=True)
        opt = kiln.Optimizer("SGD", [p], lr=0.1)
        self.assertEqual(opt.step_count, 0)
        quadratic_step(opt, [p])
        np.testing.assert_allclose(p.numpy(), [1.0 - 0.1 * 2.0, -2.0 + 0.1 * 4.0], rtol=1e-6)
        self.assertEqual(opt.step_count, 1)

    def test_parameters_of_a_module(self):
        model = kiln.layer("Linear", in_features=2, out_features=1)
        opt = kiln.Optimizer("SGD", model, lr=0.5)
        before = model.parameters()["bias"].item()
        model(np.ones((1, 2), np.float32)).sum().backward()
        opt.step()
        self.assertAlmostEqual(model.parameters()["bias"].item(), before - 0.5, places=6)
        opt.zero_grad()
        self.assertIsNone(model.parameters()["bias"].grad)

    def test_groups_with_their_own_rates(self):
        a = kiln.tensor([1.0], requires_grad=True)
        b = kiln.tensor([1.0], requires_grad=True)
        c = kiln.tensor([1.0], requires_grad=True)
        opt = kiln.Optimizer("SGD", [{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1, momentum=0.0)
        opt.add_param_group([c], lr=0.001)
        self.assertEqual(opt.num_groups, 3)
        self.assertEqual([opt.get_hyper("lr", g) for g in range(3)], [0.1, 0.01, 0.001])
        quadratic_step(opt, [a, b, c])
        np.testing.assert_allclose([a.item(), b.item(), c.item()], [0.8, 0.98, 0.998], rtol=1e-6)

    def test_hyper_parameters(self):
        opt = kiln.Optimizer("AdamW", [kiln.tensor([1.0], requires_grad=True)], lr=1e-3, weight_decay=0.05)
        self.assertAlmostEqual(opt.get_hyper("weight_decay"), 0.05)
        opt.set_hyper("lr", 0.25)
        self.assertEqual(opt.get_hyper("lr"), 0.25)
        with self.assertRaisesRegex(kiln.NotFound, "has no hyper-parameter 'momentum'; its numbers are: lr, eps, "
                                                   "weight_decay"):
            opt.get_hyper("momentum")
        with self.assertRaisesRegex(kiln.InvalidArgument, r"group 3 does not exist; the optimizer has 1 group\(s\)"):
            opt.get_hyper("lr", group=3)

    def test_bad_configurations(self):
        p = kiln.tensor([1.0], requires_grad=True)
        with self.assertRaisesRegex(kiln.NotFound, "unknown optimizer 'Adamm'"):
            kiln.Optimizer("Adamm", [p])
        with self.assertRaisesRegex(kiln.InvalidArgument, "lr must be >= 0, got -1"):
            kiln.Optimizer("SGD", [p], lr=-1.0)
        with self.assertRaisesRegex(kiln.InvalidArgument, "parameters are kiln Tensors, got ndarray"):
            kiln.Optimizer("SGD", [np.zeros(2)])
        with self.assertRaisesRegex(kiln.InvalidArgument, "a parameter group needs a 'params' entry"):
            kiln.Optimizer("SGD", [{"lr": 0.1}])

    def test_state_round_trip(self):
        def make():
            p = kiln.tensor([1.0, 2.0], requires_grad=True)
            return p, kiln.Optimizer("Adam", [p], lr=0.1)

        p, opt = make()
        for _ in range(3):
            quadratic_step(opt, [p])
        state = opt.state_dict()
        self.assertEqual(state["step"].item(), 3)
        self.assertIn("0.exp_avg", state)
        q, restored = make()
        q.copy_(p)
        restored.load_state_dict(state)
        self.assertEqual(restored.state_dict()["step"].item(), 3)
        quadratic_step(opt, [p])
        quadratic_step(restored, [q])
        np.testing.assert_array_equal(q.numpy(), p.numpy())

    def test_a_state_that_does_not_fit_changes_nothing(self):
        p = kiln.tensor([1.0, 2.0], requires_grad=True)
        opt = kiln.Optimizer("Adam", [p], lr=0.1)
        quadratic_step(opt, [p])
        state = opt.state_dict()
        state["0.exp_avg"] = np.zeros(5, np.float32)
        with self.assertRaisesRegex(kiln.ShapeMismatch, r"entry '0.exp_avg' has shape \[5\], the state needs \[2\]"):
            opt.load_state_dict(state)
        self.assertEqual(opt.state_dict()["step"].item(), 1)


class Schedules(unittest.TestCase):
    def test_step_schedule(self):
        schedule = kiln.LRSchedule("step", step_size=2, gamma=0.5)
        self.assertEqual([schedule(s, 1.0) for s in range(5)], [1.0, 1.0, 0.5, 0.5, 0.25])
        self.assertEqual(schedule.lr(2, 0.1), 0.05)

    def test_cosine_schedule(self):
        schedule = kiln.LRSchedule("cosine", t_max=10, eta_min=0.0)
        self.assertAlmostEqual(schedule(0, 0.1), 0.1)
        self.assertAlmostEqual(schedule(5, 0.1), 0.05)
        self.assertAlmostEqual(schedule(10, 0.1), 0.0)

    def test_bad_configurations(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "unknown entry 'T_max'; its entries are: t_max"):
            kiln.LRSchedule("cosine", T_max=10)
        with self.assertRaisesRegex(kiln.NotFound, "unknown lr schedule 'linear'; registered: cosine"):
            kiln.LRSchedule("linear")


if __name__ == "__main__":
    support.main()
