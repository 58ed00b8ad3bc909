//! What a collective over a group of devices costs on a fabric.
