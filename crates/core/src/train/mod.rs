//! Training: the memory a training step needs on each device ([`memory`]).

pub mod memory;
