# zotrain.Config: the CLI's keys, types, defaults and error messages.
import json
import pathlib

import pytest

import zotrain


def test_defaults_follow_method_and_precision():
    # As the CLI: each method and precision starts from its own best settings.
    assert zotrain.Config().method == "elastic"
    assert zotrain.Config(method="bp").lr == 0.01
    assert zotrain.Config(method="bp", lr=0.2).lr == 0.2
    assert zotrain.Config(precision="int8").precision == "int8"


def test_keys_are_attributes_and_items():
    c = zotrain.Config(epochs=3, seed=7, sparsity="0.33,20:0.5", cache_features=1)
    assert (c.epochs, c["seed"], c.sparsity, c.cache_features) == (3, 7, "0.33,20:0.5", True)
    c.q = 4
    c["zo_lr"] = 1e-3
    assert c.q == 4 and c.zo_lr == 1e-3
    assert set(c.keys()) == set(zotrain.config_keys()) == set(c.to_dict())
    assert "batch" in dir(c)


def test_paths_are_strings():
    c = zotrain.Config(out=pathlib.Path("runs") / "x")
    assert c.out == "runs/x"


@pytest.mark.parametrize(
    "keys, message",
    [
        ({"lr": "fast"}, "config key 'lr': expected a number, got str 'fast'"),
        ({"epochs": 2.5}, "config key 'epochs': expected an integer, got float 2.5"),
        ({"epochs": 2**40}, "config key 'epochs': 1099511627776 is not in [-2147483648, "),
        ({"method": "sgd"}, "config key 'method': 'sgd' is not "),
        ({"overwrite": 2}, "config key 'overwrite': expected a bool (or 1/0), got int 2"),
        ({"batchsize": 8}, "unknown config key 'batchsize'; the keys are model, data,"),
    ],
)
def test_bad_values_name_the_key(keys, message):
    with pytest.raises(zotrain.InputError) as e:
        zotrain.Config(**keys)
    assert message in str(e.value)
    assert isinstance(e.value, ValueError)


def test_validate_names_the_key():
    c = zotrain.Config(batch=0)
    with pytest.raises(zotrain.InputError, match="batch"):
        c.validate()


def test_file_then_keys(tmp_path):
    f = tmp_path / "run.toml"
    f.write_text('method = "bp"\nepochs = 4\nlr = 0.03\n')
    c = zotrain.Config(config=f, lr=0.07)
    assert (c.method, c.epochs, c.lr) == ("bp", 4, 0.07)
    bad = tmp_path / "bad.toml"
    bad.write_text("epochs = 'ten'\n")
    with pytest.raises(zotrain.InputError, match="bad.toml"):
        zotrain.Config(config=bad)


def test_json_round_trip_and_repr():
    c = zotrain.Config(method="zo", q=8, eps=1e-2)
    assert zotrain.Config.from_json(c.to_json()) == c
    assert json.loads(c.to_json())["q"] == 8
    r = repr(c)
    assert r.startswith("zotrain.Config(method='zo', precision='f32'") and "q=8" in r
    d = c.copy()
    d.q = 2
    assert c.q == 8
