//! Where a node runs in the forward pass: before the decoder blocks, in a range of them, or
//! after them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The part of the forward pass a node runs in.
///
/// A decoder-only transformer runs its embedding once, then `layers` decoder blocks (numbered
/// from 0), then the final norm and the head once. A node inside the blocks runs once in each
/// block of its range: all of them for a dense model, some for a model whose blocks differ
/// (DeepSeek-V3: the dense MLP in blocks 0–2, the mixture of experts in blocks 3–60). A
/// pipeline-parallel split assigns block ranges, the prologue and the epilogue to stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Span {
    /// Before the first block (embeddings): once per forward pass.
    Prologue,
    /// In each of the blocks `first..=last` (0-based, inclusive): `last − first + 1` times.
    Blocks {
        /// The first block it runs in.
        first: u64,
        /// The last block it runs in (≥ `first`).
        last: u64,
    },
    /// After the last block (final norm, lm_head): once per forward pass.
    Epilogue,
    /// Between consecutive pipeline stages: `count` boundaries (stages − 1).
    StageBoundaries {
        /// Boundaries crossed in one step.
        count: u64,
    },
}

impl Span {
    /// Every block of a model of `layers` blocks (`layers` ≥ 1).
    #[inline]
    pub fn all_blocks(layers: u64) -> Span {
        Span::Blocks {
            first: 0,
            last: layers.saturating_sub(1),
        }
    }

    /// Blocks `first..first + n` (n ≥ 1).
    #[inline]
    pub fn blocks(first: u64, n: u64) -> Span {
        Span::Blocks {
            first,
            last: first + n.saturating_sub(1),
        }
    }

    /// Executions per forward pass: the blocks in the range, or 1.
    #[inline]
    pub fn count(self) -> u64 {
        match self {
            Span::Blocks { first, last } => last - first + 1,
            Span::Prologue | Span::Epilogue => 1,
            Span::StageBoundaries { count } => count,
        }
    }

    /// Whether the node runs inside decoder blocks.
    #[inline]
    pub fn in_blocks(self) -> bool {
        matches!(self, Span::Blocks { .. })
    }
}

impl fmt::Display for Span {
    /// `blocks 0–31`, `block 3`, `before the blocks`, `after the blocks`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Span::Blocks { first, last } if first == last => write!(f, "block {first}"),
            Span::Blocks { first, last } => write!(f, "blocks {first}–{last}"),
            Span::Prologue => f.write_str("before the blocks"),
            Span::Epilogue => f.write_str("after the blocks"),
            Span::StageBoundaries { count } => {
                write!(f, "between pipeline stages (×{count})")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_names() {
        // DeepSeek-V3: 61 blocks, the first 3 dense.
        let dense = Span::blocks(0, 3);
        let moe = Span::blocks(3, 58);
        assert_eq!(dense, Span::Blocks { first: 0, last: 2 });
        assert_eq!(moe, Span::Blocks { first: 3, last: 60 });
        assert_eq!(dense.count() + moe.count(), 61);
        assert_eq!(Span::all_blocks(32).count(), 32);
        assert_eq!(Span::Prologue.count(), 1);
        assert_eq!(moe.to_string(), "blocks 3–60");
        assert_eq!(Span::blocks(5, 1).to_string(), "block 5");
        assert!(!Span::Epilogue.in_blocks() && moe.in_blocks());
    }

    #[test]
    fn serialises_with_its_kind() -> Result<(), serde_json::Error> {
        let s = serde_json::to_string(&Span::blocks(3, 58))?;
        assert_eq!(s, r#"{"kind":"blocks","first":3,"last":60}"#);
        assert_eq!(
            serde_json::to_string(&Span::Epilogue)?,
            r#"{"kind":"epilogue"}"#
        );
        assert_eq!(serde_json::from_str::<Span>(&s)?, Span::blocks(3, 58));
        Ok(())
    }
}
