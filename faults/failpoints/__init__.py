"""Fail points: the backends ``--failpoints`` chooses from (native, emulated at the wire, auto) and the plug-in
that registers them, with reply shaping on the same wire proxy (:mod:`harness.shared.wire.shaping_ops`)."""
