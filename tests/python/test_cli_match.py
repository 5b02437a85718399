# The Python module and the CLI are one library: the same config and seed give the same
# metrics, bit for bit (all but the timings), on a named data set and on its arrays.
import json

import numpy as np
import pytest

import zotrain
from conftest import require_data

KEYS = dict(data="fashion-mnist", epochs=2, train_limit=1024, val_size=512, test_limit=512,
            batch=64, seed=3)


def metrics(folder):
    lines = [json.loads(s) for s in (folder / "metrics.jsonl").read_text().splitlines()]
    for m in lines:
        del m["seconds"], m["peak_rss_bytes"]
    return lines


@pytest.mark.parametrize("method, precision", [("elastic", "f32"), ("zo", "int8")])
def test_same_metrics_as_the_cli(tmp_path, cli, method, precision):
    require_data("fashion-mnist")
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in KEYS.items()]
    cli("train", f"--method={method}", f"--precision={precision}", f"--out={tmp_path / 'cli'}",
        *flags)
    cfg = zotrain.Config(method=method, precision=precision, out=str(tmp_path / "py"), **KEYS)
    got = zotrain.Trainer(cfg).run()
    want = metrics(tmp_path / "cli")
    assert metrics(tmp_path / "py") == want and len(want) == 2
    assert [m["test_acc"] for m in got] == [m["test_acc"] for m in want]
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert summary["config"] == {**json.loads(cfg.to_json()), "out": str(tmp_path / "cli")}
    # The same splits given as arrays train to the same bits.
    splits = zotrain.load_data("fashion-mnist", val_size=512, train_limit=1024, seed=3,
                               test_limit=512)
    cfg.out = str(tmp_path / "arrays")
    zotrain.Trainer(cfg, **splits).run()
    assert metrics(tmp_path / "arrays") == want
    a = zotrain.Trainer.from_checkpoint(tmp_path / "cli")
    b = zotrain.Trainer.from_checkpoint(tmp_path / "arrays", **splits)
    for name, v in a.parameters().items():
        np.testing.assert_array_equal(v, b.get(name))
    # `zotrain eval` and evaluate_checkpoint: the whole test set, the same accuracy.
    acc = zotrain.evaluate_checkpoint(tmp_path / "cli" / "checkpoint.bin", batch=256)
    assert f"accuracy {100 * acc:.2f}%" in cli("eval", "--checkpoint",
                                               str(tmp_path / "cli" / "checkpoint.bin"))
