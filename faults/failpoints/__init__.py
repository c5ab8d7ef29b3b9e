"""Fail points: the plug-in that registers the modes ``--failpoints`` chooses from (native, emulated at the wire,
auto), with reply shaping on the same wire proxy (:mod:`harness.shared.wire.shaping_ops`). The backends themselves
are in the shared layer (:mod:`harness.shared.failpoint_backends`): the prose tests' server check uses one too."""
