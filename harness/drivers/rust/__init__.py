"""The Rust executor (``--driver rust``, ``rust@VERSION``): a Cargo project linked against the ``mongodb`` crate."""
