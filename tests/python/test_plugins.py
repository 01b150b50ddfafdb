"""Plugins: listing what each registered, loading one more, refusals, unloading."""
import os
import tempfile
import unittest

import numpy as np

import kiln
import support

PLUGIN_FOLDER = os.path.join(os.path.dirname(os.path.realpath(os.environ["KILN_LIBRARY"])), "kiln", "plugins")
LAYERS = os.path.join(PLUGIN_FOLDER, "libkiln_layers.so")


def bare_runtime():
    return kiln.Runtime(default_plugins=False)


class Listing(unittest.TestCase):
    def test_each_plugin_says_what_it_registered(self):
        by_name = {p.name: p for p in kiln.plugins(kiln.Runtime())}
        layers = by_name["kiln-layers"]
        self.assertEqual(layers.version, kiln.version())
        self.assertEqual(os.path.realpath(layers.path), os.path.realpath(LAYERS))
        self.assertEqual(layers.abi_version >> 16, 1)
        self.assertIn(("layer", "Linear"), layers.registrations)
        self.assertIn(("optimizer", "AdamW"), by_name["kiln-optim"].registrations)
        self.assertIn(("lr schedule", "cosine"), by_name["kiln-optim"].registrations)
        self.assertIn(("data source", "npy"), by_name["kiln-data"].registrations)
        self.assertIn(("transform", "one_hot"), by_name["kiln-data"].registrations)
        self.assertIn(("strategy", "single"), by_name["kiln-parallel"].registrations)

    def test_config_schema_of_a_layer_and_an_optimizer(self):
        rt = kiln.Runtime()
        linear = kiln.config_schema("layer", "Linear", rt)
        self.assertEqual([e.name for e in linear],
                         ["in_features", "out_features", "bias", "init", "bias_init", "activation"])
        self.assertEqual((linear[0].type, linear[0].required), ("int", True))
        self.assertEqual((linear[2].type, linear[2].required), ("bool", False))
        self.assertIn("learning rate", {e.name: e.doc for e in kiln.config_schema("optimizer", "SGD", rt)}["lr"])
        with self.assertRaisesRegex(kiln.NotFound, "unknown layer 'Linearr'"):
            kiln.config_schema("layer", "Linearr", rt)
        with self.assertRaisesRegex(kiln.Unsupported, "ops have attributes"):
            kiln.config_schema("op", "matmul", rt)
        with self.assertRaisesRegex(ValueError, "unknown registration kind 'layers'"):
            kiln.config_schema("layers", "Linear", rt)

    def test_a_bare_runtime_has_none(self):
        self.assertEqual(kiln.plugins(bare_runtime()), [])


class Loading(unittest.TestCase):
    def test_load_makes_the_layers_available(self):
        rt = bare_runtime()
        info = kiln.load_plugin(LAYERS, runtime=rt)
        self.assertEqual(info.name, "kiln-layers")
        self.assertEqual([p.name for p in kiln.plugins(rt)], ["kiln-layers"])
        model = kiln.layer("Linear", in_features=3, out_features=2, runtime=rt)
        self.assertEqual(model(np.ones((4, 3), np.float32)).shape, (4, 2))

    def test_loading_twice_is_refused(self):
        rt = bare_runtime()
        kiln.load_plugin(LAYERS, runtime=rt)
        with self.assertRaisesRegex(kiln.PluginRefused, "a plugin named 'kiln-layers' is already loaded"):
            kiln.load_plugin(LAYERS, runtime=rt)
        self.assertEqual(len(kiln.plugins(rt)), 1)

    def test_a_file_that_is_not_a_plugin_is_refused_naming_it(self):
        rt = bare_runtime()
        with self.assertRaises(kiln.PluginRefused) as caught:
            kiln.load_plugin(os.environ["KILN_LIBRARY"], runtime=rt)
        self.assertIn(os.environ["KILN_LIBRARY"], str(caught.exception))
        self.assertIn("kiln_plugin_entry", str(caught.exception))
        with tempfile.NamedTemporaryFile(suffix=".so") as not_a_library:
            with self.assertRaisesRegex(kiln.PluginRefused, "not a shared library"):
                kiln.load_plugin(not_a_library.name, runtime=rt)
        self.assertEqual(kiln.plugins(rt), [])

    def test_unload_removes_the_types_but_keeps_objects_usable(self):
        rt = bare_runtime()
        kiln.load_plugin(LAYERS, runtime=rt)
        model = kiln.layer("ReLU", runtime=rt)
        kiln.unload_plugin("kiln-layers", runtime=rt)
        self.assertEqual(kiln.plugins(rt), [])
        with self.assertRaisesRegex(kiln.NotFound, "unknown layer 'ReLU'"):
            kiln.layer("ReLU", runtime=rt)
        np.testing.assert_array_equal(model(np.array([-1.0, 2.0], np.float32)).numpy(), [0.0, 2.0])

    def test_unloading_an_unknown_plugin(self):
        with self.assertRaisesRegex(kiln.NotFound, "kiln-nothing"):
            kiln.unload_plugin("kiln-nothing", runtime=bare_runtime())


if __name__ == "__main__":
    support.main()
