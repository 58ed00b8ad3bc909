//! Communication between chips: the links that join them ([`fabric`]), the systems they form
//! ([`system`]) and what a collective over a group of them costs ([`collective`]).
//!
//! Conventions: a link's bandwidth is **per GPU, per direction**, in B/s (1 GB/s = 1e9 B/s);
//! NVIDIA's "900 GB/s" for the H100's NVLink 4 is the bidirectional aggregate, 450 GB/s each
//! way. A latency is the fixed time α of one step of a collective over that link, seconds.

pub mod collective;
pub mod fabric;
pub mod system;

pub use fabric::{Fabric, LinkTier, Platform};
pub use system::{Group, System, SystemError};
