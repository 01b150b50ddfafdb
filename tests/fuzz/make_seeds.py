#!/usr/bin/env python3
"""Writes the seed corpora of the data-format and training-state fuzz
targets: small valid files and near misses of each format, plain and
gzip-compressed. The committed seeds are its output; run it from anywhere
to regenerate them."""
import gzip
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, mtime=0)


def idx(type_code, dims, payload):
    return bytes([0, 0, type_code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


def npy(header, payload, version=1):
    header = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    length = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode("latin-1") + payload


images = idx(0x08, [2, 2, 2], bytes(range(8)))
write("idx", "images_u8", images)
write("idx", "images_u8.gz", gz(images))
write("idx", "labels_u8", idx(0x08, [3], bytes([1, 2, 9])))
write("idx", "f32", idx(0x0D, [2], struct.pack(">ff", 1.5, -2.0)))
write("idx", "i16", idx(0x0B, [2], struct.pack(">hh", -5, 7)))
write("idx", "short_data", idx(0x08, [4, 4], bytes(3)))
write("idx", "truncated.gz", gz(images)[:-6])
write("idx", "members.gz", gz(images[:12]) + gz(images[12:]))
write("idx", "trailing.gz", gz(images) + b"\0\0")

write("npy", "f4", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", struct.pack("<4f", 1, 2, 3, 4)))
write("npy", "i8_v2", npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", struct.pack("<3q", 1, -2, 3), 2))
write("npy", "u1.gz", gz(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }", bytes(4))))
write("npy", "scalar", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", struct.pack("<d", 0.5)))
write("npy", "fortran", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }", bytes(8)))
write("npy", "big_endian", npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", bytes(4)))

# The first byte picks the layout: bit 0 header, bits 1-2 label column - 2, bits 3-4 delimiter.
write("csv", "header_last_label", b"\x01a,b,label\n1.5,2,0\n-3,4e2,1\n")
write("csv", "no_label_semicolon", bytes([2 | 1 << 3]) + b"1;2;3\n4;5;6\r\n")
write("csv", "ragged", b"\x00" + b"1,2,3\n4,5\n")
write("csv", "not_a_number", b"\x00" + b"1,x,3\n")
write("csv", "gzip", b"\x04" + gz(b"0,1,2\n1,3,4\n"))

record = bytes([3]) + bytes(range(256)) * 12
write("cifar10", "one_record", record)
write("cifar10", "two_records.gz", gz(record + bytes([9]) + bytes(3072)))
write("cifar10", "bad_label", bytes([10]) + bytes(3072))
write("cifar10", "short", record[:-1])


def training_state(metadata, tensors=None, data=b""):
    """A safetensors image whose metadata is a training state's manifest."""
    import json
    header = dict(tensors or {})
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


manifest = {
    "kiln.format": "training_state/1", "kiln.version": "0.1.0", "plugin.kiln-layers": "0.1.0",
    "trainer.step": "12", "trainer.epoch": "1", "trainer.epoch_started": "1", "trainer.epoch_step": "3",
    "trainer.epoch_batches": "3", "trainer.epoch_samples": "192", "trainer.updates": "12",
    "loader.batches_per_epoch": "9", "optimizer.groups": "2",
    "optimizer.group.0.lr": "0.01", "optimizer.group.0.base_lr": "0.1",
    "optimizer.group.1.lr": "0.001", "optimizer.group.1.base_lr": "0.001",
    "rng.seed": "42", "rng.offset": "18446744073709551615", "loss_scale.scale": "65536", "loss_scale.clean_steps": "7",
}
write("training_state", "complete.safetensors",
      training_state(manifest, {"model.w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(8)))
write("training_state", "malformed_values.safetensors",
      training_state({**manifest, "trainer.step": "-3", "rng.seed": "1e3", "loss_scale.scale": "0",
                      "optimizer.group.1.lr": "inf", "trainer.epoch": "12abc"}))
write("training_state", "huge_group_count.safetensors",
      training_state({**manifest, "optimizer.groups": "9223372036854775807"}))
write("training_state", "weights_only.safetensors", training_state({"format": "pt"}))
