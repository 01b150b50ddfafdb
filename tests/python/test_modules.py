"""Modules: layers by type, Sequential and Graph, build, forward, parameters
and buffers, modes, devices and dtypes."""
import unittest

import numpy as np

import kiln
import support


def mlp():
    return kiln.Sequential(kiln.layer("Linear", in_features=3, out_features=4), kiln.layer("ReLU"),
                           kiln.layer("Linear", {"in_features": 4, "out_features": 2}))


def small_cnn():
    return kiln.Sequential({
        "conv1": kiln.layer("Conv2d", in_channels=1, out_channels=2, kernel_size=3, padding=1),
        "bn1": kiln.layer("BatchNorm2d", num_features=2),
        "relu": kiln.layer("ReLU"),
        "pool": kiln.layer("MaxPool2d", kernel_size=2),
        "flatten": kiln.layer("Flatten"),
        "fc": kiln.layer("Linear", in_features=8, out_features=3),
    })


class Layers(unittest.TestCase):
    def test_linear_computes_x_w_transposed_plus_b(self):
        layer = kiln.layer("Linear", in_features=3, out_features=2)
        self.assertEqual(layer.type, "Linear")
        params = layer.parameters()
        self.assertEqual(list(params), ["weight", "bias"])
        w, b = params["weight"].numpy(), params["bias"].numpy()
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_allclose(layer(x).numpy(), x @ w.T + b, rtol=1e-6)

    def test_config_errors_name_the_entries(self):
        with self.assertRaisesRegex(kiln.InvalidArgument, "entry 'out_features' \\(int\\) is required but was not "
                                                          "given; its entries are: in_features"):
            kiln.layer("Linear", in_features=2)
        with self.assertRaisesRegex(kiln.NotFound, "unknown layer 'Linaer'"):
            kiln.layer("Linaer")

    def test_op_module(self):
        add = kiln.op_module("add")
        self.assertEqual(add.type, "op:add")
        self.assertEqual(add(np.ones(2, np.float32), np.ones(2, np.float32)).tolist(), [2.0, 2.0])
        self.assertEqual(add.parameters(), {})


class Containers(unittest.TestCase):
    def test_sequential_names_children_by_index(self):
        model = mlp()
        self.assertEqual(model.type, "Sequential")
        self.assertEqual(list(model.parameters()), ["0.weight", "0.bias", "2.weight", "2.bias"])
        self.assertEqual(model(np.ones((5, 3), np.float32)).shape, (5, 2))

    def test_sequential_with_named_children_and_buffers(self):
        model = small_cnn()
        self.assertEqual(list(model.parameters()), ["conv1.weight", "conv1.bias", "bn1.weight", "bn1.bias",
                                                    "fc.weight", "fc.bias"])
        buffers = model.buffers()
        self.assertEqual(list(buffers), ["bn1.running_mean", "bn1.running_var", "bn1.num_batches_tracked"])
        self.assertEqual((buffers["bn1.num_batches_tracked"].shape, buffers["bn1.num_batches_tracked"].dtype),
                         ((), kiln.int64))
        self.assertEqual(list(model.state_dict()), list(model.parameters()) + list(buffers))

    def test_append_and_bad_children(self):
        model = kiln.Sequential().append(kiln.layer("ReLU"), name="act")
        self.assertEqual(model(np.array([-1.0, 1.0], np.float32)).tolist(), [0.0, 1.0])
        with self.assertRaisesRegex(kiln.InvalidArgument, "a Sequential child must be a kiln.Module, got int"):
            kiln.Sequential(3)

    def test_graph_with_a_skip_connection_and_two_outputs(self):
        graph = kiln.Graph(["x", "y"])
        graph.add("sum", kiln.op_module("add"), ["x", "y"]).add("act", kiln.layer("ReLU"), ["sum"])
        self.assertEqual(graph.type, "Graph")
        out = graph(np.array([1.0, -3.0], np.float32), np.array([1.0, 1.0], np.float32))
        self.assertIsInstance(out, kiln.Tensor)
        self.assertEqual(out.tolist(), [2.0, 0.0])
        graph.set_outputs("act", "sum")
        act, total = graph(np.array([1.0, -3.0], np.float32), np.array([1.0, 1.0], np.float32))
        self.assertEqual((act.tolist(), total.tolist()), ([2.0, 0.0], [2.0, -2.0]))

    def test_graph_errors(self):
        graph = kiln.Graph(["x"])
        with self.assertRaisesRegex(kiln.NotFound, "the graph has no input or node named 'nope' before this point"):
            graph.add("y", kiln.layer("ReLU"), ["nope"])
        with self.assertRaisesRegex(kiln.InvalidArgument, "graph node 'y' must be a kiln.Module, got str"):
            graph.add("y", "ReLU", ["x"])


class Build(unittest.TestCase):
    def test_build_infers_output_shapes(self):
        self.assertEqual(small_cnn().build((2, 1, 4, 4)), [kiln.TensorSpec((2, 3), kiln.float32)])
        self.assertEqual(mlp().to(kiln.float64).build(kiln.TensorSpec((7, 3), kiln.float64)),
                         [kiln.TensorSpec((7, 2), kiln.float64)])
        self.assertEqual(mlp().build(np.zeros((1, 3), np.float32))[0].shape, (1, 2))

    def test_a_layer_that_does_not_fit_is_named(self):
        with self.assertRaisesRegex(kiln.ShapeMismatch, r"layer 'conv1' \(Conv2d, index 0 in Sequential\) on input "
                                                        r"f32\[1, 2, 4, 4\]"):
            small_cnn().build((1, 2, 4, 4))
        with self.assertRaisesRegex(kiln.DTypeMismatch, r"layer '0' \(Linear, index 0 in Sequential\) on input "
                                                        r"f64\[7, 3\]"):
            mlp().build(kiln.TensorSpec((7, 3), kiln.float64))


class State(unittest.TestCase):
    def test_parameters_are_the_modules_own_tensors(self):
        model = mlp()
        model.parameters()["0.bias"].copy_(np.full(4, 7.0, np.float32))
        np.testing.assert_array_equal(model.parameters()["0.bias"].numpy(), np.full(4, 7.0))

    def test_load_state_dict_round_trip(self):
        source, target = mlp(), mlp()
        target.load_state_dict({k: v.numpy() for k, v in source.state_dict().items()})
        x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
        np.testing.assert_array_equal(target(x).numpy(), source(x).numpy())

    def test_load_state_dict_checks_names_and_shapes_first(self):
        model = mlp()
        before = model.parameters()["0.weight"].numpy().copy()
        state = {k: np.zeros(v.shape, np.float32) for k, v in model.state_dict().items()}
        state["extra"] = np.zeros(1, np.float32)
        del state["2.bias"]
        with self.assertRaisesRegex(kiln.InvalidArgument, r"missing \['2.bias'\], unexpected \['extra'\]"):
            model.load_state_dict(state)
        state["2.bias"] = np.zeros(5, np.float32)
        with self.assertRaisesRegex(kiln.ShapeMismatch, r"'2.bias' has shape \(5,\) in the state, \(2,\) in the "
                                                        r"module"):
            model.load_state_dict(state, strict=False)
        np.testing.assert_array_equal(model.parameters()["0.weight"].numpy(), before)
        del state["2.bias"]
        model.load_state_dict(state, strict=False)
        np.testing.assert_array_equal(model.parameters()["0.weight"].numpy(), np.zeros((4, 3)))


class ModesDevicesDtypes(unittest.TestCase):
    def test_train_and_eval(self):
        model = small_cnn()
        self.assertTrue(model.training)
        self.assertIs(model.eval(), model)
        self.assertFalse(model.training)
        self.assertTrue(model.train().training)

    def test_eval_mode_uses_the_running_statistics(self):
        model = small_cnn()
        x = np.random.default_rng(1).normal(size=(4, 1, 4, 4)).astype(np.float32)
        model(x)  # train mode: updates the running statistics
        self.assertEqual(model.buffers()["bn1.num_batches_tracked"].item(), 1)
        model.eval()
        model(x)
        self.assertEqual(model.buffers()["bn1.num_batches_tracked"].item(), 1)

    def test_cast(self):
        model = mlp()
        self.assertIs(model.to(kiln.float64), model)
        self.assertEqual({v.dtype for v in model.parameters().values()}, {kiln.float64})
        self.assertEqual(model(np.ones((1, 3))).dtype, kiln.float64)
        with self.assertRaisesRegex(kiln.InvalidArgument, "cannot cast a module to i32"):
            model.to(kiln.int32)

    def test_to_a_missing_device(self):
        if kiln.default_runtime().cuda_device_count > 0:
            self.skipTest("a GPU is present: test_cuda covers moving modules")
        with self.assertRaisesRegex(kiln.DeviceMismatch, "device cuda:0 is not available"):
            mlp().to("cuda:0")

    def test_repr_and_close(self):
        model = mlp()
        self.assertEqual(repr(model), "kiln.Module(Sequential)")
        with model:
            pass
        self.assertEqual(repr(model), "kiln.Module(closed)")
        with self.assertRaisesRegex(kiln.InvalidState, "this Sequential is closed"):
            model(np.ones((1, 3), np.float32))


if __name__ == "__main__":
    support.main()
