//! The tensors one node reads or writes, held inline.

use super::TensorId;
use serde::{Serialize, Serializer};
use std::ops::Deref;

/// Up to [`Ports::CAPACITY`] tensor ids, inline: a node's inputs or outputs without a heap
/// allocation. Dereferences to a slice of the ids given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    ids: [TensorId; Ports::CAPACITY],
    len: u8,
}

impl Ports {
    /// Most tensors one side of a node holds. The decoder needs 3 (attention reads Q, K and V;
    /// GPT-2's `c_attn` writes them; a mixture of experts combines routed, shared and weights).
    pub const CAPACITY: usize = 4;

    /// The ids given.
    ///
    /// # Panics
    /// More than [`Ports::CAPACITY`] ids: a bug in the code that builds the graph (every
    /// builder of this crate is tested on every decoder variant).
    #[inline(always)]
    pub fn of(ids: &[TensorId]) -> Self {
        assert!(
            ids.len() <= Self::CAPACITY,
            "a node has at most {} tensors a side",
            Self::CAPACITY
        );
        let mut p = Ports {
            ids: [0; Self::CAPACITY],
            len: ids.len() as u8,
        };
        p.ids[..ids.len()].copy_from_slice(ids);
        p
    }
}

impl Deref for Ports {
    type Target = [TensorId];
    #[inline(always)]
    fn deref(&self) -> &[TensorId] {
        &self.ids[..self.len as usize]
    }
}

impl<'a> IntoIterator for &'a Ports {
    type Item = &'a TensorId;
    type IntoIter = std::slice::Iter<'a, TensorId>;
    #[inline(always)]
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for Ports {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_it_was_given() {
        let p = Ports::of(&[3, 1, 4]);
        assert_eq!(&*p, &[3, 1, 4]);
        assert!(p.contains(&4) && !p.contains(&0));
        assert_eq!(p.first(), Some(&3));
        assert!(Ports::of(&[]).is_empty());
    }
}
