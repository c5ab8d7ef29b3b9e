"""``withTransaction`` through the unified runner (``tests/data/unified-runner/with-transaction.yml``).

The callback's operations are run and checked by the runner inside pymongo's own retry loop; their
errors reach the driver whatever their ``expectError`` says. Each check is shown able to fail, and a
misspelt operation in a callback is an ``error`` when the file is loaded.
"""

from __future__ import annotations

from harness.formats.loaders import load_file
from tests.helpers import UNIFIED_RUNNER_DATA, runner_file_test

FILE = UNIFIED_RUNNER_DATA / "with-transaction.yml"


def _test(description: str):
    return runner_file_test("with-transaction.yml", description)


def test_a_callback_result_that_does_not_match_fails_naming_the_callback_operation(embedded_run):
    test = _test("the callback's operations")
    test.operations[0].arguments["callback"][1].expect_result = {"insertedId": 3}
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "operations[0].arguments.callback[1]" in verdict.message, verdict.message


def test_a_callback_error_that_does_not_match_fails(embedded_run):
    test = _test("an error in the callback")
    test.operations[1].arguments["callback"][0].expect_error = {"errorCode": 3}
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "callback[0]" in verdict.message, verdict.message


def test_a_driver_that_does_not_retry_the_callback_fails(embedded_run, monkeypatch):
    from pymongo.client_session import ClientSession

    def once(self, callback, **kwargs):  # a withTransaction without the convenient API's retry loop
        self.start_transaction(**kwargs)
        try:
            result = callback(self)
        except Exception:
            self.abort_transaction()
            raise
        self.commit_transaction()
        return result

    monkeypatch.setattr(ClientSession, "with_transaction", once)
    verdict = embedded_run.verdict(_test("a transient transaction error"))
    assert verdict.outcome == "failed" and "TransientTransactionError" in verdict.message, verdict.message


def test_a_misspelt_callback_operation_is_an_error_at_load_time(tmp_path):
    spec = tmp_path / "typo.yml"
    spec.write_text(
        FILE.read_text().replace(
            "name: insertOne\n              object: *collection\n"
            "              arguments: { session: *session, document: { _id: 2 } }",
            "name: insertOen\n              object: *collection\n"
            "              arguments: { session: *session, document: { _id: 2 } }",
        )
    )
    test = load_file(spec)[0]
    assert test.load_error and "operations[0].arguments.callback[1]" in test.load_error
    assert "'insertOen'" in test.load_error and str(spec) in test.load_error
