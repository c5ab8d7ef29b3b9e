"""The Go driver's executor (``--driver go``): a Go program speaking docs/executor-protocol.md, built by ``build``."""
