"""``harness matrix`` definitions: flags and YAML, every error named where it came from; the matrix id.

The open axes (drivers at releases, every kind of target) and the cells they make have tests of their own
(``test_cells.py``); the plan and ``--cell`` are in ``test_plan.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.formats.source_names import MAIN_JOB_FALLBACK, MAIN_JOB_PROJECT
from harness.matrix.cli import add_matrix_arguments
from harness.matrix.definition import MAIN_JOB, DefinitionError, Driver, load_definition, suites
from tests.paths import SHARED_SPECS


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working directory with a spec folder of its own beside it: ../shared/specs/upstream/{legacy,unified}."""
    for suite in ("legacy", "unified"):
        (tmp_path / "shared" / "specs" / "upstream" / suite).mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    return work


def define(cwd: Path, *argv: str):
    parser = argparse.ArgumentParser()
    add_matrix_arguments(parser)
    args = parser.parse_args(list(argv))
    return load_definition(args.matrix, args, cwd)


def error(cwd: Path, *argv: str) -> str:
    with pytest.raises(DefinitionError) as caught:
        define(cwd, *argv)
    return str(caught.value)


def main_job_upstream(suite: str) -> str:
    """What the main job reads for ``legacy``/``unified`` here: the team's folder beside the checkout, or
    (without it) the pinned pymongo sdist's unified tests."""
    folder = SHARED_SPECS / "upstream" / suite
    return str(folder) if (SHARED_SPECS / "upstream" / "legacy").is_dir() else MAIN_JOB_FALLBACK


def test_flags_give_versions_targets_suites_and_the_main_job_s_sources(work):
    definition = define(
        work,
        "--pymongo",
        "4.18.3,4.19.0,4.20.0",
        "--secantusdb",
        "0.7.0b1,0.7.0b2",
        "--target",
        "secantusdb-daemon",
        "--repeat",
        "3",
        "--jobs",
        "2",
        "--workers",
        "4",
        "-k",
        "resume",
        "--timeout",
        "12",
        "--campaign",
        "events=300,faults=5,seed=7",
    )
    assert definition.drivers == (Driver("pymongo", "4.18.3"), Driver("pymongo", "4.19.0"), Driver("pymongo", "4.20.0"))
    assert definition.secantusdb == ("0.7.0b1", "0.7.0b2") and definition.targets == ("secantusdb-daemon",)
    assert definition.suites == suites() == ("legacy", "unified", "supplementary", "prose", "checks")
    # Not the folder beside the working directory: the main job's own sources, wherever the command runs.
    assert definition.specs == {
        "legacy": main_job_upstream("legacy"),
        "unified": main_job_upstream("unified"),
        "supplementary": MAIN_JOB_PROJECT,
    }
    assert definition.spec_names == dict.fromkeys(("legacy", "unified", "supplementary"), MAIN_JOB)
    assert (definition.repeat, definition.jobs, definition.workers) == (3, 2, 4)
    assert (definition.keyword, definition.timeout) == ("resume", 12.0)
    assert definition.campaign.arguments() == ["--events", "300", "--faults", "5", "--seed", "7"]


def test_a_yaml_file_with_flags_laid_over_it(work, tmp_path):
    matrix = tmp_path / "m.yml"
    matrix.write_text(
        "pymongo: ['4.18.3', '4.20.0']\nsecantusdb: ['0.7.0b2']\ntargets: [embedded, secantusdb-daemon]\n"
        "servers: ['uri=mongodb://u:secret@db1:27017,db2:27017/?replicaSet=rs']\nsuites: [unified]\n"
        "specs-unified: shared/specs/upstream/unified\nrepeat: 2\n"
        "campaign: {events: 100, faults: 2, seed: 3, kinds: [restart, resumable_error]}\n"
    )
    definition = define(work, "--matrix", str(matrix), "--pymongo", "4.19.0", "--repeat", "4")
    assert definition.drivers == (Driver("pymongo", "4.19.0"),) and definition.repeat == 4  # the flags win
    assert definition.targets == ("embedded", "secantusdb-daemon") and definition.suites == ("unified",)
    # Relative to the file; the id hashes it as written.
    assert definition.specs == {"unified": str((tmp_path / "shared/specs/upstream/unified").resolve())}
    assert definition.spec_names == {"unified": "shared/specs/upstream/unified"}
    assert definition.servers == ("uri=mongodb://u:secret@db1:27017,db2:27017/?replicaSet=rs",)  # commas kept
    assert "secret" not in str(definition.describe())
    assert definition.campaign.kinds == ("restart", "resumable_error")
    assert define(work, "--matrix", str(matrix), "--campaign", "off").campaign is None


def test_a_yaml_file_names_drivers_and_spec_sources(work, tmp_path):
    matrix = tmp_path / "m.yml"
    matrix.write_text(
        "drivers: ['pymongo@4.18.3', node, 'go@2.10.0']\nsuites: [supplementary, checks]\n"
        "specs-supplementary: 'project:scenarios/supplementary'\n"
    )
    definition = define(work, "--matrix", str(matrix))
    assert definition.drivers == (Driver("pymongo", "4.18.3"), Driver("node"), Driver("go", "2.10.0"))
    assert definition.specs == {"supplementary": "project:scenarios/supplementary"}  # a source, as written
    assert definition.targets == ("embedded",) and definition.secantusdb == (None,)


@pytest.mark.parametrize(
    "yaml_text, expected",
    [
        ("pymongo: [4.20, '4.19.0']\n", "pymongo[0]: 4.2 is a float, not a string; quote it ('4.2')"),
        ("drivers: [pymongo, 4.20]\n", "drivers[1]: 4.2 is a float, not a string"),
        ("drivers: [mongosh]\n", "drivers: unknown driver 'mongosh'"),
        ("pymongo: ['4.20.0']\npymongos: [x]\n", "unknown key(s) pymongos"),
        ("pymongo: ['4.20.0']\nrepeat: 0\n", "repeat: must be at least 1, got 0"),
        ("pymongo: ['4.20.0']\nworkers: 0\n", "workers: must be at least 1, got 0"),
        ("pymongo: ['4.20.0']\ncampaign: {events: 10, speed: 2}\n", "campaign: unknown campaign key(s) speed"),
        ("pymongo: ['4.20.0']\nsuites: [legacy, prose, fuzz]\n", "suites: unknown suite(s) fuzz"),
        ("pymongo: ['4.20.0']\ntargets: [embedded, mongod]\n", "targets: unknown target 'mongod'"),
        ("- just a list\n", "expected a mapping of keys"),
        ("pymongo: ['4.20.0'\n", "not valid YAML"),
    ],
)
def test_file_errors_name_the_file_and_key(work, tmp_path, yaml_text, expected):
    matrix = tmp_path / "bad.yml"
    matrix.write_text(yaml_text)
    message = error(work, "--matrix", str(matrix))
    assert str(matrix) in message and expected in message


@pytest.mark.parametrize(
    "argv, expected",
    [
        ((), "no drivers: give --driver"),
        (("--pymongo", "4.20.0,latest"), "--pymongo: 'latest' is not a version"),
        (("--pymongo", "4.9,4.9.0"), "--pymongo: the same version listed twice"),
        (("--pymongo", "4.20.0,4.20.0"), "--pymongo: listed more than once: 4.20.0"),
        (("--pymongo", "4.20.0,"), "--pymongo: empty entry"),
        (("--pymongo", "4.20.0", "--target", "mongod"), "--target: unknown target 'mongod'"),
        (("--pymongo", "4.20.0", "--target", "embedded=/data"), "--target: target embedded does not take '/data'"),
        (("--pymongo", "4.20.0", "--target", "secantusdb-daemon=fast"), "target secantusdb-daemon does not take"),
        (("--pymongo", "4.20.0", "--target", "embedded,embedded"), "--target: listed more than once: embedded"),
        (("--pymongo", "4.20.0", "--target", "uri=http://x"), "--target: uri= needs a mongodb://"),
        (
            ("--pymongo", "4.20.0", "--server", "mongo:8.0"),
            "--server: a server is uri[=CONNECTION-STRING|env:NAME] or testcontainers[=IMAGE], got 'mongo:8.0'",
        ),
        (("--pymongo", "4.20.0", "--server", "uri=http://x"), "--server: uri= needs a mongodb://"),
        (("--pymongo", "4.20.0", "--server", "uri=mongodb://h:notaport/"), "--server: bad connection string"),
        (
            ("--pymongo", "4.20.0", "--secantusdb", "0.7.0b3", "--target", "mongo-java-server"),
            "--secantusdb: SecantusDB versions need a SecantusDB --target",
        ),
        (
            (
                "--pymongo",
                "4.20.0",
                "--secantusdb",
                "0.7.0b2",
                "--server",
                "uri=mongodb://h/",
                "--target",
                "embedded",
                "--campaign",
                "events=ten",
            ),
            "--campaign.events: expected a whole number",
        ),
        (
            ("--pymongo", "4.20.0", "--campaign", "kinds=restart+earthquake"),
            "--campaign.kinds: unknown fault kind(s) earthquake",
        ),
        (("--pymongo", "4.20.0", "--jobs", "two"), "--jobs: expected a whole number"),
        (("--pymongo", "4.20.0", "--workers", "0"), "--workers: must be at least 1, got 0"),
        (("--pymongo", "4.20.0", "--timeout", "-1"), "--timeout: must be a positive number"),
    ],
)
def test_flag_errors_name_the_flag(work, argv, expected):
    assert expected in error(work, *argv)


def test_a_spec_path_given_is_taken_from_the_working_directory_and_must_exist(work):
    message = error(work, "--pymongo", "4.20.0", "--specs-unified", "nowhere", "--suites", "unified")
    assert message.startswith("--specs-unified: ") and str(work / "nowhere") in message
    given = define(work, "--pymongo", "4.20.0", "--specs-unified", "../shared/specs/upstream/unified")
    assert given.specs["unified"] == str((work.parent / "shared/specs/upstream/unified").resolve())
    assert given.specs["legacy"] == main_job_upstream("legacy")  # the suites not given keep the main job's
    assert given.spec_names["unified"] == "../shared/specs/upstream/unified" and given.spec_names["legacy"] == MAIN_JOB
    assert define(work, "--pymongo", "4.20.0", "--suites", "prose").specs == {}  # prose needs no spec files


def test_the_matrix_id_covers_what_decides_results_but_not_repeat_jobs_or_workers(work):
    base = define(work, "--pymongo", "4.19.0,4.20.0", "--secantusdb", "0.7.0b3")
    same = define(
        work, "--pymongo", "4.19.0,4.20.0", "--secantusdb", "0.7.0b3", "--repeat", "5", "--jobs", "3", "--workers", "2"
    )
    assert same.matrix_id == base.matrix_id and base.matrix_id.startswith("m-") and len(base.matrix_id) == 14
    # --pymongo is shorthand: the same drivers by --driver are the same matrix
    assert define(work, "--driver", "pymongo@4.19.0,pymongo@4.20.0", "--secantusdb", "0.7.0b3").matrix_id == (
        base.matrix_id
    )
    for changed in (
        ("--pymongo", "4.20.0"),
        ("--pymongo", "4.19.0,4.20.0", "--driver", "node"),
        ("--pymongo", "4.19.0,4.20.0", "-k", "x"),
        ("--pymongo", "4.19.0,4.20.0", "--timeout", "5"),
        ("--pymongo", "4.19.0,4.20.0", "--suites", "unified"),
        ("--pymongo", "4.19.0,4.20.0", "--target", "secantusdb-daemon"),
        ("--pymongo", "4.19.0,4.20.0", "--specs-supplementary", "project:scenarios/supplementary"),
        ("--pymongo", "4.19.0,4.20.0", "--campaign", "events=10"),
    ):
        assert define(work, *changed, "--secantusdb", "0.7.0b3").matrix_id != base.matrix_id, changed


@pytest.mark.parametrize(
    "argv, expected",
    [
        (("--find-links", "/nonexistent-wheels"), "--find-links: /nonexistent-wheels is not a directory"),
        (("--python", "/nonexistent/python"), "--python /nonexistent/python: cannot run it"),
        (("--out", "/proc/no-matrix-here"), "--out: cannot create /proc/no-matrix-here"),
        (("--installer", "pip", "--offline"), "--offline with pip needs --find-links"),
        (("--pymongo", "4.2.0x"), "--pymongo: '4.2.0x' is not a version"),
        (("--driver", "node@6.10.0", "--target", "mongo-java-server=1.47.0,server=9.9"), "server=9.9 is not one of"),
    ],
)
def test_the_command_refuses_to_start_with_exit_2_and_says_why(tmp_path, capsys, argv, expected):
    from harness.app.cli import main

    base = [
        "matrix",
        "--pymongo",
        "4.20.0",
        "--suites",
        "prose",
        "--envs",
        str(tmp_path / "envs"),
        "--out",
        str(tmp_path / "out"),
    ]
    assert main([*base, *argv]) == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "out" / "manifest.json").exists()


# -- the open axes: drivers at releases, targets of every kind


def test_drivers_are_names_the_harness_runs_each_at_an_optional_release(work):
    definition = define(work, "--driver", "pymongo@4.18.3,pymongo-async,pymongo-executor,node@6.x,java@5.14.0,go")
    assert definition.drivers == (
        Driver("pymongo", "4.18.3"),
        Driver("pymongo-async"),
        Driver("pymongo-executor"),
        Driver("node", "6.x"),
        Driver("java", "5.14.0"),
        Driver("go"),
    )
    assert [d.package for d in definition.drivers] == ["pymongo", "pymongo", "pymongo", None, None, None]
    assert [str(d) for d in definition.drivers][:4] == [
        "pymongo@4.18.3",
        "pymongo-async",
        "pymongo-executor",
        "node@6.x",
    ]
    both = define(work, "--driver", "node@6.10.0", "--pymongo", "4.19.0,4.20.0")  # --driver's first, then --pymongo's
    assert both.drivers == (Driver("node", "6.10.0"), Driver("pymongo", "4.19.0"), Driver("pymongo", "4.20.0"))


@pytest.mark.parametrize(
    "argv, expected",
    [
        (
            ("--driver", "mongosh"),
            "--driver: unknown driver 'mongosh'; drivers: go, java, node, pymongo, pymongo-async, pymongo-executor",
        ),
        (("--driver", "node=/opt/executor"), "--driver: unknown driver 'node=/opt/executor'"),  # a path is no release
        (("--driver", "node@"), "--driver: 'node@': '' is not a release (e.g. node@6.10.0)"),
        (("--driver", "java@$(rm -rf ~)"), "--driver: 'java@$(rm -rf ~)': '$(rm -rf ~)' is not a release"),
        (("--driver", "go@-v"), "'go@-v': '-v' is not a release (e.g. go@2.10.0)"),
        (("--driver", "pymongo@latest"), "--driver: pymongo: 'latest' is not a version (PEP 440"),
        (("--driver", "pymongo-async@4.x"), "--driver: pymongo-async: '4.x' is not a version"),
        (("--driver", "node,node"), "--driver: listed more than once: node"),
        (
            ("--driver", "pymongo@4.20.0,node", "--pymongo", "4.19.0,4.20.0"),
            "--pymongo and --driver: listed in both: pymongo@4.20.0",
        ),
    ],
)
def test_driver_errors_name_the_flag_and_the_entry(work, argv, expected):
    assert expected in error(work, *argv)


def test_a_driver_listed_in_the_file_and_by_the_shorthand_flag_names_both(work, tmp_path):
    matrix = tmp_path / "m.yml"
    matrix.write_text("drivers: ['pymongo@4.20.0']\n")
    message = error(work, "--matrix", str(matrix), "--pymongo", "4.20.0")
    assert message == f"--pymongo and {matrix}: drivers: listed in both: pymongo@4.20.0"


def test_targets_take_every_secantusdb_shape_and_mongo_java_server_with_its_arguments(work):
    definition = define(
        work,
        "--pymongo",
        "4.20.0",
        "--target",
        "embedded,mongo-java-server=1.47.0,server=6.0,present=replicaset,embedded-on-disk,"
        "secantusdb-daemon=test-commands,on-disk,mongo-java-server,embedded-no-test-commands",
    )
    # A comma starts a new target only before a target name: the arguments' own commas stay with them.
    assert definition.targets == (
        "embedded",
        "mongo-java-server=1.47.0,server=6.0,present=replicaset",
        "embedded-on-disk",
        "secantusdb-daemon=test-commands,on-disk",
        "mongo-java-server",
        "embedded-no-test-commands",
    )
    assert definition.servers == () and definition.secantusdb == (None,)
    only_java = define(work, "--pymongo", "4.20.0", "--target", "mongo-java-server=1.46.0,server=4.4")
    assert only_java.targets == ("mongo-java-server=1.46.0,server=4.4",) and only_java.secantusdb == ()


@pytest.mark.parametrize(
    "target, expected",
    [
        ("mongo-java-server=1.47.0,server=9.9", "--target: mongo-java-server: server=9.9 is not one of"),
        ("mongo-java-server=1.47.0,present=sharded", "--target: mongo-java-server: present=sharded is not one of"),
        ("mongo-java-server=1.47.0,colour=blue", "--target: mongo-java-server: unknown or repeated option 'colour'"),
        ("mongo-java-server=server=6.0,server=7.0", "unknown or repeated option 'server'"),
        (
            "embedded,mongo-java-server=1.47.0,6.0",
            "--target: mongo-java-server: '6.0' needs a name (server=, present=)",
        ),
    ],
)
def test_a_bad_mongo_java_server_argument_is_a_definition_error(work, target, expected):
    assert expected in error(work, "--pymongo", "4.20.0", "--target", target)


def test_a_real_server_given_as_a_target_goes_to_the_servers(work, tmp_path):
    definition = define(
        work,
        "--pymongo",
        "4.20.0",
        "--target",
        "embedded,uri=mongodb://u:pw@db1:27017,db2:27017/?replicaSet=rs,testcontainers",
        "--server",
        "testcontainers=mongo:7.0",
    )
    assert definition.targets == ("embedded",)
    assert definition.servers == (
        "testcontainers=mongo:7.0",  # --server's first
        "uri=mongodb://u:pw@db1:27017,db2:27017/?replicaSet=rs",  # the hosts' comma kept
        "testcontainers=mongo:8.0",  # the default image
    )
    only_servers = define(work, "--pymongo", "4.20.0", "--target", "uri=mongodb://db/")
    assert only_servers.targets == () and only_servers.servers == ("uri=mongodb://db/",)
    assert only_servers.secantusdb == ()  # no SecantusDB target: no SecantusDB axis
    matrix = tmp_path / "m.yml"
    matrix.write_text("pymongo: ['4.20.0']\ntargets: [embedded, 'uri=mongodb://a:1,b:2/']\n")  # a list: never split
    assert define(work, "--matrix", str(matrix)).servers == ("uri=mongodb://a:1,b:2/",)


def test_suites_and_their_default_sources(work):
    part = define(work, "--pymongo", "4.20.0", "--suites", "checks,supplementary")
    assert part.suites == ("supplementary", "checks")  # the main job's order, whatever the order given
    assert part.specs == {"supplementary": MAIN_JOB_PROJECT} and part.spec_names == {"supplementary": MAIN_JOB}
    given = define(
        work, "--pymongo", "4.20.0", "--specs-supplementary", "pypi:pymongo==4.19.0", "--suites", "supplementary"
    )
    assert given.specs == {"supplementary": "pypi:pymongo==4.19.0"}  # a source is kept as it is written


def test_the_default_sources_and_the_matrix_id_do_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    argv = ("--driver", "pymongo@4.20.0,node", "--target", "embedded,mongo-java-server")
    here = define(Path.cwd(), *argv)
    monkeypatch.chdir(elsewhere)
    there = define(elsewhere, *argv)
    assert there.specs == here.specs and there.matrix_id == here.matrix_id
    assert all(Path(path).is_absolute() for path in there.specs.values() if ":" not in path)
    assert define(elsewhere, "--driver", "pymongo@4.20.0,node", "--target", "embedded").matrix_id != here.matrix_id


@pytest.mark.parametrize(
    "argv", [("--driver", "pymongo@4.9,pymongo@4.9.0"), ("--driver", "pymongo@4.20", "--pymongo", "4.20.0")]
)
def test_one_driver_release_spelled_twice_is_refused_whichever_flag_names_it(work, argv):
    assert "same version listed twice" in error(work, *argv)
