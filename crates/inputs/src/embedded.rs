//! Files compiled into the binary by `build.rs`.

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
