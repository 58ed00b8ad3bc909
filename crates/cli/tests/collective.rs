//! `roofline op all-reduce` and the other collectives: bad input is one `error:` line and a
//! `hint:`, exit 2. (The catalog's platforms give the chips their nodes; the costs themselves
//! are tested in roofline-core against hand arithmetic and the published measurements.)

mod common;
use common::{bad_input, this_cpu};

#[test]
fn bad_collective_flags_exit_2_with_a_hint() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["op", "all-reduce", "--bytes", "64XB"],
            "`64XB` is not a size",
        ),
        (
            &["op", "all-reduce", "--bytes", "1e300"],
            "outside 0 to 1 PiB",
        ),
        (&["op", "all-gather", "--bytes", "2PiB"], "2PiB"),
        (
            &[
                "op",
                "all-reduce",
                "--bytes",
                "1MiB",
                "--algorithm",
                "rings",
            ],
            "`rings` is no algorithm",
        ),
        (
            &["op", "broadcast", "--bytes", "1MiB", "--devices", "0"],
            "--devices",
        ),
        (
            &[
                "op",
                "all-to-all",
                "--bytes",
                "1MiB",
                "--devices",
                "2000000",
            ],
            "outside 1 to",
        ),
        (
            &[
                "op",
                "send-recv",
                "--bytes",
                "1MiB",
                "--devices",
                "12",
                "--nodes",
                "5",
            ],
            "do not split evenly",
        ),
        (&["op", "reduce-scatter"], "--bytes"),
    ];
    for (args, needle) in cases {
        bad_input(args, needle);
    }
}

#[test]
fn a_chip_without_a_node_says_so() {
    let cpu = this_cpu();
    bad_input(
        &[
            "op",
            "all-reduce",
            "--bytes",
            "64MiB",
            "--hardware",
            cpu.to_str().expect("UTF-8 path"),
        ],
        "no default node",
    );
}
