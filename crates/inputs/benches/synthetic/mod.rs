//! The synthetic PyTorch profiler trace of the import benchmarks.

use std::fmt::Write;

/// A trace of `layers` × 6 events.
pub fn trace(layers: usize) -> String {
    let mut s = String::with_capacity(layers * 6 * 200);
    s.push_str("{\"traceEvents\": [\n");
    for i in 0..layers {
        let t = 5_107_416_643_395.255 + i as f64 * 100.0;
        let ext = 2 * i as u64;
        let _ = write!(
            s,
            "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":{t:.3},\"dur\":60,\
             \"args\":{{\"External id\":{ext},\"Input Dims\":[[1,64,256],[688,256],[]],\"Input type\":[\"float\",\"float\",\"\"]}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":{:.3},\"dur\":40,\
             \"args\":{{\"Input Dims\":[[64,256],[256,688]],\"Input type\":[\"float\",\"float\"]}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":{:.3},\"dur\":5,\
             \"args\":{{\"correlation\":{i}}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm80_xmma_gemm\",\"pid\":0,\"tid\":7,\"ts\":{:.3},\"dur\":30,\
             \"args\":{{\"correlation\":{i}}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::view\",\"pid\":1,\"tid\":1,\"ts\":{:.3},\"dur\":5,\
             \"args\":{{\"External id\":{},\"Input Dims\":[[1,64,256],[]],\"Input type\":[\"float\",\"ScalarList\"]}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"copy\",\"pid\":0,\"tid\":7,\"ts\":{:.3},\"dur\":3,\
             \"args\":{{\"External id\":{}}}}}{}\n",
            t + 10.0,
            t + 20.0,
            t + 40.0,
            t + 80.0,
            ext + 1,
            t + 85.0,
            ext + 1,
            if i + 1 == layers { "" } else { "," },
        );
    }
    s.push_str("]}\n");
    s
}
