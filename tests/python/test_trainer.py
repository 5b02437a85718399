# zotrain.Trainer on numpy arrays: training, logits, steps, parameter views, memory, checkpoints.
import json
import os

import numpy as np
import pytest

import zotrain


def config(tmp_path, **keys):
    keys.setdefault("epochs", 1)
    keys.setdefault("batch", 32)
    keys.setdefault("out", str(tmp_path / "run"))
    return zotrain.Config(**keys)


def test_bp_on_arrays_learns(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path, method="bp", epochs=2), **arrays)
    seen = []
    metrics = t.run(on_epoch=seen.append)
    assert seen == metrics and [m["epoch"] for m in metrics] == [1, 2]
    assert metrics[-1]["test_acc"] >= 0.9
    # What run() wrote is what it returned.
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(s) for s in lines] == metrics
    x, y = arrays["test"]
    assert t.evaluate(x, y) == pytest.approx(metrics[-1]["test_acc"], abs=0)
    assert t.state["epochs_done"] == 2 and t.classes == 4 and t.input_shape == [1, 28, 28]


def test_forward_takes_pixels_or_normalized_floats(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path), **arrays)
    x = arrays["test"][0][:50]
    logits = t.forward(x)
    assert logits.shape == (50, 4) and logits.dtype == np.float32
    # The run's normalization: mean and std of the training pixels / 255.
    p = arrays["train"][0].astype(np.float64) / 255
    norm = ((x.astype(np.float32) / 255 - np.float32(p.mean())) / np.float32(p.std()))
    np.testing.assert_allclose(t.forward(norm[:, None].astype(np.float32)), logits, atol=1e-5)
    np.testing.assert_array_equal(t.forward(x[:, None]), logits)  # [N, 1, H, W] as [N, H, W]
    with pytest.raises(zotrain.InputError, match=r"float inputs of shape \[50, 28\], expected"):
        t.forward(norm[:, 0])
    with pytest.raises(zotrain.InputError, match="uint8 pixels or of floats"):
        t.forward(x.astype(np.int16))


def test_steps_are_deterministic_and_counted(tmp_path, arrays):
    x, y = arrays["train"][0][:32], arrays["train"][1][:32]
    a = zotrain.Trainer(config(tmp_path, method="zo", q=3), **arrays)
    b = zotrain.Trainer(config(tmp_path, method="zo", q=3), **arrays)
    before = {k: v.copy() for k, v in a.parameters().items()}
    ra, rb = a.step(x, y), b.step(x, y)
    assert ra == rb and ra["forward_passes"] == 6 and ra["backward_passes"] == 0
    assert ra["rows"] == 32 and np.isfinite(ra["loss"])
    changed = [k for k, v in a.parameters().items() if not np.array_equal(v, before[k])]
    assert changed  # the ZO step moved the weights
    for k, v in a.parameters().items():
        np.testing.assert_array_equal(v, b.parameters()[k])
    assert a.state["steps"] == 1
    with pytest.raises(zotrain.InputError, match="a step takes 1 to batch = 32"):
        a.step(arrays["train"][0][:33], arrays["train"][1][:33])
    with pytest.raises(zotrain.InputError, match="class 7, the run has 4 classes"):
        a.step(x[:, None].astype(np.float32), np.full(32, 7))


def test_parameters_are_views(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path), **arrays)
    x = arrays["test"][0][:8]
    params = t.parameters()
    assert list(params)[:2] == ["0.weight", "0.bias"]
    w = params["11.weight"]
    assert w.dtype == np.float32 and w.shape == (4, 84)
    w[:] = 0  # in place: the run's own memory
    np.testing.assert_array_equal(t.get("11.weight"), 0)
    bias = np.array([0, 0, 5, 0], np.float32)
    t.set("11.bias", bias)
    assert (t.forward(x).argmax(1) == 2).all()
    with pytest.raises(zotrain.InputError, match=r"expected shape \[4\]"):
        t.set("11.bias", np.zeros(5))
    with pytest.raises(zotrain.InputError, match="no parameter called 'fc.weight'; this run has 0.weight"):
        t.get("fc.weight")
    del t  # the views keep the run alive
    assert w.sum() == 0


def test_int8_parameters_are_mantissas(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path, precision="int8", method="zo"), **arrays)
    params, exps = t.parameters(), t.exponents()
    assert set(params) == set(exps) and all(v.dtype == np.int8 for v in params.values())
    w = params["0.weight"]
    assert np.abs(w.astype(int)).max() <= 127
    t.set("0.weight", np.ones(w.shape, np.int64))
    assert (w == 1).all()
    with pytest.raises(zotrain.InputError, match=r"mantissa -128 at 0 is not in \[-127, 127\]"):
        t.set("0.weight", np.full(w.shape, -128))
    logits = t.forward(arrays["test"][0][:4])
    assert logits.shape == (4, 4) and np.isfinite(logits).all()
    r = t.step(arrays["train"][0][:32], arrays["train"][1][:32])
    assert r["forward_passes"] == 2 and "signs" in r


def test_npu_parameters_change_through_set(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path, precision="int8-npu", method="zo"), **arrays)
    x = arrays["test"][0][:16]
    w = t.get("11.weight")
    assert not w.flags.writeable
    before = t.forward(x)
    t.set("11.weight", -w)  # re-quantized with the program's scales
    after = t.forward(x)
    assert not np.allclose(before, after)


def test_memory_plan(tmp_path, arrays, cli):
    cfg = config(tmp_path, method="elastic", bp_layers=1)
    t = zotrain.Trainer(cfg, **arrays)
    plan = t.memory_plan()
    total = plan["total_bytes"]
    assert total == sum(r["bytes"] for r in plan["rows"]) == sum(plan["buckets"].values())
    assert plan["arena_bytes"] == total
    assert plan["buckets"]["gradients"] > 0 and t.bp_layers == plan["bp_layers"] == 1
    assert plan["full_zo_bytes"] < total < plan["full_bp_bytes"]
    # Full ZO of the same configuration: with elastic f32's parameter average (ema_decay) and
    # without Full ZO's default output turns (their buffers).
    zo_cfg = config(tmp_path, method="zo", ema_decay=0.999, zo_activity=False)
    zo = zotrain.Trainer(zo_cfg, **arrays).memory_plan()
    assert zo["buckets"]["gradients"] == 0 and zo["total_bytes"] == plan["full_zo_bytes"]
    # Without data, as `zotrain memory --json`: the same report.
    del plan["arena_bytes"]
    assert zotrain.memory_plan(cfg, input=(1, 28, 28), classes=4) == plan
    flags = ["--method=elastic", "--bp-layers=1", "--batch=32", "--classes=4", "--json"]
    assert json.loads(cli("memory", *flags)) == plan
    with pytest.raises(zotrain.InputError, match="input: expected 1 to 3 sizes"):
        zotrain.memory_plan(cfg, input=())


def test_checkpoints_resume_and_export(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path, method="bp"), **arrays)
    first = t.run()
    r = zotrain.Trainer.from_checkpoint(tmp_path / "run", epochs=2, **arrays)
    assert r.state["epochs_done"] == 1
    np.testing.assert_array_equal(r.get("0.weight"), t.get("0.weight"))
    second = r.run()
    assert [m["epoch"] for m in second] == [2]
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(s) for s in lines] == first + second
    with pytest.raises(zotrain.InputError, match="lr cannot be changed when resuming"):
        zotrain.Trainer.from_checkpoint(tmp_path / "run", lr=0.1, **arrays)
    # A checkpoint of a hand-written loop, and its model as ONNX.
    r.step(*(a[:16] for a in arrays["train"]))
    r.save(tmp_path / "mine.bin")
    assert zotrain.Trainer.from_checkpoint(tmp_path / "mine.bin", **arrays).state["steps"] == r.state["steps"]
    said = r.export_onnx(tmp_path / "m.onnx")
    assert said.startswith(str(tmp_path / "m.onnx") + ": lenet5 (f32) as ONNX")
    assert os.path.getsize(tmp_path / "m.onnx") > 4 * 40000
    with pytest.raises(zotrain.InputError, match="not a zotrain"):
        zotrain.Trainer.from_checkpoint(tmp_path / "m.onnx")


def test_onnx_model_trains_from_arrays(tmp_path, arrays):
    # A model exported by zotrain comes back in as config.model, with its weights.
    t = zotrain.Trainer(config(tmp_path, method="bp"), **arrays)
    t.run()
    t.export_onnx(tmp_path / "m.onnx")
    u = zotrain.Trainer(config(tmp_path, model=str(tmp_path / "m.onnx"), method="elastic",
                               out=str(tmp_path / "u")), **arrays)
    np.testing.assert_array_equal(u.forward(arrays["test"][0]), t.forward(arrays["test"][0]))


def test_callbacks_errors_stop_the_run(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path, epochs=3), **arrays)

    def stop(epoch, batch, batches, loss):
        if epoch == 2 and batch == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        t.run(on_batch=stop)
    with pytest.raises(zotrain.InputError, match="stopped in the middle of an epoch"):
        t.run()
    # The first epoch's results and checkpoint stay.
    assert len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) == 1
    assert zotrain.Trainer.from_checkpoint(tmp_path / "run", **arrays).state["epochs_done"] == 1


def test_bad_arrays_name_the_argument(tmp_path, arrays):
    x, y = arrays["train"]
    cases = [
        (dict(train=(x.astype(np.float32), y)), "train images: expected uint8 pixels"),
        (dict(train=(x, y[:-1])), "train: 512 images but 511 labels"),
        (dict(train=(x, y - 1)), "train labels: class -1 at "),
        (dict(train=(x[:, :5], y)), None),
        (dict(train=x), "train: expected a pair (images, labels)"),
        (dict(train=(x, y), test=(x[:, :, :20], y)), "test images: shape [1, 28, 20], train's are"),
        (dict(test=(x, y)), "val and test arrays need train arrays too"),
    ]
    for kw, message in cases:
        with pytest.raises(zotrain.InputError) as e:
            zotrain.Trainer(config(tmp_path), **kw)
        if message:
            assert message in str(e.value)


def test_input_normalization_of_a_model_from_elsewhere(tmp_path, arrays):
    t = zotrain.Trainer(config(tmp_path, input_mean=0.25, input_std=0.5), **arrays)
    x = arrays["test"][0][:20]
    floats = ((x.astype(np.float32) / 255 - np.float32(0.25)) / np.float32(0.5))[:, None]
    np.testing.assert_allclose(t.forward(x), t.forward(floats), atol=1e-5)
    t.run()
    assert '"norm_mean":0.25' in (tmp_path / "run" / "checkpoint.bin").read_bytes().decode("latin-1")
    with pytest.raises(zotrain.InputError, match="config key 'input_mean': expected 0 unless input_std is given"):
        zotrain.Trainer(config(tmp_path, input_mean=0.25), **arrays)
