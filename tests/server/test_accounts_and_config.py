import pytest

from server.config.errors import ConfigError
from server.config.file import load_config
from server.game.passwords import hash_password, split_login, verify_password
from server.views.tp.modtimes import ModTimes


def test_passwords_are_salted_and_verified():
    one, two = hash_password("pw", n=2**4), hash_password("pw", n=2**4)
    assert one != two
    assert verify_password("pw", one) and not verify_password("PW", one)
    assert not verify_password("pw", "garbage") and not verify_password("pw", "scrypt$x$y$z$00$00")


def test_split_login():
    assert split_login("alice@tae") == ("alice", "tae")
    assert split_login("alice") == ("alice", None)


def test_modtimes_increase_only_on_change():
    times = ModTimes()
    times.refresh([("a", 1), ("b", 1)])
    a, b = times.get("a"), times.get("b")
    times.refresh([("a", 1), ("b", 2)])
    assert times.get("a") == a and times.get("b") > b
    assert times.touch("a", 5) > times.get("b")
    times.refresh([("b", 2)])
    assert "a" not in times


def write(tmp_path, text):
    path = tmp_path / "tae.toml"
    path.write_text(text)
    return str(path)


def test_config_file(tmp_path):
    config = load_config(
        write(tmp_path, 'listen = ["tcp:7000"]\n[game]\nname = "g"\nseed = 4\ntimer = "basic"\n')
    )
    assert config.listen == ("tcp:7000",)
    assert config.game.name == "g" and config.game.seed == 4 and config.game.timer.kind == "basic"


@pytest.mark.parametrize(
    "text, words",
    [
        ("colour = 1\n", "unknown setting 'colour'"),
        ("[game]\nseed = 'x'\n", "game.seed"),
        ("[game]\ntimer = 'daily'\n", "timer"),
        ("log_format = 'xml'\n", "log_format"),
        ("listen = [\n", "not valid TOML"),
    ],
)
def test_bad_config_names_the_setting(tmp_path, text, words):
    with pytest.raises(ConfigError, match=words):
        load_config(write(tmp_path, text))


def test_missing_config_file():
    with pytest.raises(ConfigError, match="cannot read"):
        load_config("/nonexistent/tae.toml")
