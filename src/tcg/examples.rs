//! The programs shipped in `examples/tcg/`, for tests and documentation.

/// lcm with gcd and abs: the guided-TCG paper's running example.
pub const LCM: &str = include_str!("../../examples/tcg/lcm.tcg");
/// The Snap paper's Fig. 1.
pub const MID: &str = include_str!("../../examples/tcg/mid.tcg");
/// Array-backed sequence, sorted insert and binary search tree.
pub const DATA_STRUCTURES: &str = include_str!("../../examples/tcg/datastructures.tcg");
