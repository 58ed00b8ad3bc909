//! PyTorch profiler (Kineto) Chrome traces into measured kernels.
//!
//! A trace is `{"traceEvents": [...]}` (or a bare array) of complete events (`"ph": "X"`) with
//! `cat`, `name`, `ts` and `dur` in microseconds, `pid`, `tid` and `args`. Read:
//!
//! - `cpu_op` (older traces: `Operator`): framework operators, with `Input Dims`, `Input type`,
//!   `Concrete Inputs` (when `record_shapes=True`) and `External id`;
//! - `kernel`: GPU kernels, with `External id` and `correlation`;
//! - `cuda_runtime`/`cuda_driver` (`cudaLaunchKernel`): the launch, same `correlation`;
//! - `user_annotation` `ProfilerStep#N`: one per profiler step (forward pass).
//!
//! **With kernels (a GPU trace)** every kernel is a measured kernel. Its operator is the
//! `cpu_op` whose `External id` it carries, else the innermost `cpu_op` around its launch (the
//! runtime event of the same `correlation`, on the same thread); its FLOPs and bytes come from
//! our cost model by that operator's shapes ([`roofline_core::profile::aten`]), or its nearest
//! enclosing operator that has a cost. Kernels of one operator share its cost in proportion to
//! their durations. An fp32 GEMM whose kernel name says tensor cores (`tensorop`, `xmma`,
//! `hmma`, `wgmma`, `s1688`, `s16816`, `tf32`) is held against the TF32 peak.
//!
//! **Without kernels (a CPU trace)** the measured kernels are the outermost operators we can
//! cost: an `aten::linear` counts once, not again as the `aten::mm` inside it. The time of
//! top-level operators with no cost (views, `to` without a copy) is summed by name.

use super::at_line;
use crate::error::InputError;
use roofline_core::ops::Compute;
use roofline_core::precision::Precision;
use roofline_core::profile::aten::shaped_op;
use roofline_core::profile::{
    ArgShape, CostSource, FrameworkOp, Profile, ProfileFormat, ProfiledKernel, UncostedOps,
};
use roofline_core::units::{Bytes, Flop, Seconds};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Kernel-name fragments that mean tensor cores (for an fp32 GEMM: TF32).
const TENSOR_CORE_NAMES: [&str; 7] = [
    "tensorop", "xmma", "hmma", "wgmma", "s1688", "s16816", "tf32",
];

const TRACE_HINT: &str = "export the trace with `prof.export_chrome_trace(\"trace.json\")` \
                          (torch.profiler, record_shapes=True)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cat {
    CpuOp,
    Kernel,
    Runtime,
    Annotation,
    Other,
}

fn category(cat: &str) -> Cat {
    match cat.to_ascii_lowercase().as_str() {
        "cpu_op" | "operator" => Cat::CpuOp,
        "kernel" => Cat::Kernel,
        "cuda_runtime" | "runtime" | "cuda_driver" => Cat::Runtime,
        "user_annotation" => Cat::Annotation,
        _ => Cat::Other,
    }
}

/// One complete event, validated.
#[derive(Debug, Clone)]
struct Event {
    /// Position in `traceEvents`.
    index: usize,
    cat: Cat,
    name: String,
    /// Start and duration, microseconds.
    ts: f64,
    dur: f64,
    thread: String,
    args: Map<String, Value>,
}

impl Event {
    fn end(&self) -> f64 {
        self.ts + self.dur
    }
    /// Whether `other` (on the same thread) lies within this event. Kineto writes absolute
    /// times in µs to the ns (`5107416643617.949`), where one f64 step is about 1 ns: a child
    /// that ends on its parent's nanosecond can add up to 1 ns past it, so ends are compared
    /// to within 1 ns, or 4 steps of the number where that is more.
    fn holds(&self, other: &Event) -> bool {
        self.thread == other.thread
            && other.ts >= self.ts
            && other.end() <= self.end() + time_tolerance(self.end())
    }
    fn arg_u64(&self, key: &str) -> Option<u64> {
        self.args.get(key).and_then(Value::as_u64)
    }
}

/// 1 ns (times are in µs), or 4 f64 steps at `t` where that is more.
fn time_tolerance(t: f64) -> f64 {
    (4.0 * f64::EPSILON * t.abs()).max(1e-3)
}

fn field_error(origin: &str, i: usize, name: &str, field: &str, what: &str) -> InputError {
    InputError::new(format!(
        "{origin}: traceEvents[{i}] (`{name}`): field `{field}` {what}"
    ))
    .with_hint(TRACE_HINT)
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn event(origin: &str, i: usize, raw: RawEvent) -> Result<Option<Event>, InputError> {
    let RawEvent::Object(o) = raw else {
        return Err(
            InputError::new(format!("{origin}: traceEvents[{i}] is not an object"))
                .with_hint(TRACE_HINT),
        );
    };
    if o.ph.as_ref().and_then(Value::as_str) != Some("X") {
        return Ok(None); // metadata, counters, flow events
    }
    let cat = category(o.cat.as_ref().and_then(Value::as_str).unwrap_or(""));
    if cat == Cat::Other {
        return Ok(None);
    }
    let Some(Value::String(name)) = o.name else {
        return Err(field_error(origin, i, "?", "name", "is missing"));
    };
    let ts = number(o.ts.as_ref())
        .ok_or_else(|| field_error(origin, i, &name, "ts", "is missing or not a number"))?;
    let dur = number(o.dur.as_ref())
        .ok_or_else(|| field_error(origin, i, &name, "dur", "is missing or not a number"))?;
    if !ts.is_finite() {
        return Err(field_error(
            origin,
            i,
            &name,
            "ts",
            &format!("is {ts}: a start time is a finite number of µs"),
        ));
    }
    if dur < 0.0 || !dur.is_finite() {
        return Err(field_error(
            origin,
            i,
            &name,
            "dur",
            &format!("is {dur}: a duration is a finite number ≥ 0 µs"),
        ));
    }
    let key = |k: Option<Value>| match k {
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Ok(Some(Event {
        index: i,
        cat,
        name,
        // `+ 0.0` turns -0.0 into 0.0, so that every sort below agrees with `<=`.
        ts: ts + 0.0,
        dur: dur + 0.0,
        thread: format!("{}/{}", key(o.pid), key(o.tid)),
        args: match o.args {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        },
    }))
}

/// The fields of a trace event the importer reads; any other is skipped unread.
#[derive(Debug, Default, Deserialize)]
struct RawFields {
    ph: Option<Value>,
    cat: Option<Value>,
    name: Option<Value>,
    ts: Option<Value>,
    dur: Option<Value>,
    pid: Option<Value>,
    tid: Option<Value>,
    args: Option<Value>,
}

/// One element of `traceEvents`: an object's fields, or anything else (an error, reported
/// with the element's index).
#[derive(Debug)]
// Each event is read into one and consumed at once: a box would be one more allocation per event.
#[allow(clippy::large_enum_variant)]
enum RawEvent {
    Object(RawFields),
    NotObject,
}

impl<'de> Deserialize<'de> for RawEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawEvent;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a trace event")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawEvent, A::Error> {
                RawFields::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawEvent::Object)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawEvent, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(RawEvent::NotObject)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<RawEvent, E> {
                Ok(RawEvent::NotObject)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<RawEvent, E> {
                Ok(RawEvent::NotObject)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<RawEvent, E> {
                Ok(RawEvent::NotObject)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<RawEvent, E> {
                Ok(RawEvent::NotObject)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<RawEvent, E> {
                Ok(RawEvent::NotObject)
            }
            fn visit_unit<E: de::Error>(self) -> Result<RawEvent, E> {
                Ok(RawEvent::NotObject)
            }
        }
        d.deserialize_any(V)
    }
}

/// The events of a trace, validated and sorted by kind as they are read: the document is never
/// held whole, only the events kept.
#[derive(Default)]
struct Events {
    ops: Vec<Event>,
    kernels: Vec<Event>,
    runtime: Vec<Event>,
    steps: Vec<String>,
    /// The first invalid event's error: reported once the whole text is known to be JSON, so
    /// that a truncated file is named as truncated, as when the JSON is read first.
    invalid: Option<InputError>,
    count: usize,
}

impl Events {
    fn take(&mut self, origin: &str, raw: RawEvent) {
        let i = self.count;
        self.count += 1;
        if self.invalid.is_some() {
            return;
        }
        match event(origin, i, raw) {
            Ok(Some(e)) => match e.cat {
                Cat::CpuOp => self.ops.push(e),
                Cat::Kernel => self.kernels.push(e),
                Cat::Runtime => self.runtime.push(e),
                Cat::Annotation if e.name.starts_with("ProfilerStep#") => self.steps.push(e.name),
                Cat::Annotation | Cat::Other => {}
            },
            Ok(None) => {}
            Err(e) => self.invalid = Some(e),
        }
    }
}

/// What the top level of the document held.
enum Top {
    /// A list of events (bare, or as `traceEvents`).
    Events,
    /// An object without a `traceEvents` list.
    NoList,
    /// Neither an object nor a list.
    Other,
}

/// Reads the top level: a bare list of events, or an object whose `traceEvents` list is read
/// event by event into `events` (the last `traceEvents` key counts, as in a JSON object).
struct TopSeed<'a> {
    origin: &'a str,
    events: &'a mut Events,
}

/// Reads a list of events into `events`.
struct ListSeed<'a> {
    origin: &'a str,
    events: &'a mut Events,
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    /// Whether the value was a list.
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        *self.events = Events::default();
        while let Some(raw) = seq.next_element::<RawEvent>()? {
            self.events.take(self.origin, raw);
        }
        Ok(true)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Top;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Top, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = Top;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object with `traceEvents`")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        ListSeed {
            origin: self.origin,
            events: self.events,
        }
        .visit_seq(seq)
        .map(|_| Top::Events)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "traceEvents" {
                found = map.next_value_seed(ListSeed {
                    origin: self.origin,
                    events: self.events,
                })?;
                if !found {
                    *self.events = Events::default();
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(if found { Top::Events } else { Top::NoList })
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Top, E> {
        Ok(Top::Other)
    }
}

/// `Input Dims`, `Input type` and `Concrete Inputs` of an operator event.
fn framework_op(origin: &str, e: &Event) -> Result<FrameworkOp, InputError> {
    let mut shapes = Vec::new();
    if let Some(dims) = e.args.get("Input Dims") {
        let Some(list) = dims.as_array() else {
            return Err(field_error(
                origin,
                e.index,
                &e.name,
                "args.Input Dims",
                "is not a list of shapes",
            ));
        };
        for (j, arg) in list.iter().enumerate() {
            shapes.push(arg_shape(arg).ok_or_else(|| {
                field_error(
                    origin,
                    e.index,
                    &e.name,
                    &format!("args.Input Dims[{j}]"),
                    &format!("is `{arg}`, not a shape (a list of sizes ≥ 0)"),
                )
            })?);
        }
    }
    let strings = |key: &str| -> Vec<String> {
        e.args
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(FrameworkOp {
        name: e.name.clone(),
        shapes,
        types: strings("Input type"),
        values: strings("Concrete Inputs"),
        instance: e.arg_u64("External id"),
    })
}

fn arg_shape(v: &Value) -> Option<ArgShape> {
    let Some(a) = v.as_array() else {
        return v.is_null().then(|| ArgShape::Tensor(Vec::new()));
    };
    if a.iter().all(Value::is_u64) {
        return Some(ArgShape::Tensor(
            a.iter().filter_map(Value::as_u64).collect(),
        ));
    }
    let mut list = Vec::with_capacity(a.len());
    for t in a {
        let dims = t.as_array()?;
        if !dims.iter().all(Value::is_u64) {
            return None;
        }
        list.push(dims.iter().filter_map(Value::as_u64).collect());
    }
    Some(ArgShape::List(list))
}

/// For each operator, the index of its innermost enclosing operator on the same thread.
fn parents(ops: &[Event]) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by(|&a, &b| {
        (&ops[a].thread, ops[a].ts, -ops[a].dur)
            .partial_cmp(&(&ops[b].thread, ops[b].ts, -ops[b].dur))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut parent = vec![None; ops.len()];
    let mut stack: Vec<usize> = Vec::new();
    for &i in &order {
        while let Some(&top) = stack.last() {
            if ops[top].holds(&ops[i]) {
                break;
            }
            stack.pop();
        }
        parent[i] = stack.last().copied();
        stack.push(i);
    }
    parent
}

fn costed_kernel(
    name: String,
    index: usize,
    duration: Seconds,
    op: FrameworkOp,
    share: f64,
    tensor_cores: bool,
) -> ProfiledKernel {
    match shaped_op(&op.name, &op.shapes, &op.types, &op.values) {
        Some(s) => {
            let compute = match s.compute {
                Compute::Matrix(Precision::Fp32) if tensor_cores => {
                    Compute::Matrix(Precision::Tf32)
                }
                c => c,
            };
            let flop_precision = match compute {
                Compute::Matrix(p) => p,
                Compute::Vector | Compute::Network => s.precision,
            };
            ProfiledKernel {
                name,
                index,
                duration,
                flops: if s.cost.flops.get() > 0.0 {
                    vec![(flop_precision, Flop(s.cost.flops.get() * share))]
                } else {
                    Vec::new()
                },
                tensor_instructions: None,
                bytes_read: Some(Bytes(s.cost.bytes_read.get() * share)),
                bytes_written: Some(Bytes(s.cost.bytes_written.get() * share)),
                l2_bytes: None,
                compute: Some(compute),
                cost_source: CostSource::CostModel,
                op: Some(op),
                shaped_as: Some(s.description),
            }
        }
        None => ProfiledKernel {
            name,
            index,
            duration,
            flops: Vec::new(),
            tensor_instructions: None,
            bytes_read: None,
            bytes_written: None,
            l2_bytes: None,
            compute: None,
            cost_source: CostSource::Unknown,
            op: Some(op),
            shaped_as: None,
        },
    }
}

fn is_costed(origin: &str, e: &Event) -> Result<bool, InputError> {
    let op = framework_op(origin, e)?;
    Ok(shaped_op(&op.name, &op.shapes, &op.types, &op.values).is_some())
}

/// Parses a Chrome trace written by the PyTorch profiler. `origin` names the file in errors.
///
/// # Errors
/// An [`InputError`] when the JSON is malformed or truncated (with its line and column); when
/// it has no `traceEvents` list; when a kernel or operator event lacks `name`, `ts` or `dur`,
/// or has a negative duration (naming the event's index and field); when `Input Dims` is not a
/// list of shapes; or when the trace has no kernel and no `cpu_op` event.
pub fn parse(text: &str, origin: &str) -> Result<Profile, InputError> {
    let mut events = Events::default();
    let syntax = |e: serde_json::Error| {
        let what = if e.is_eof() {
            "the JSON ends early: the file is truncated".to_string()
        } else {
            format!("malformed JSON: {e}")
        };
        at_line(origin, e.line(), format!("column {}: {what}", e.column())).with_hint(TRACE_HINT)
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let top = TopSeed {
        origin,
        events: &mut events,
    }
    .deserialize(&mut de)
    .map_err(syntax)?;
    de.end().map_err(syntax)?;
    match top {
        Top::Events => {}
        Top::NoList => {
            return Err(InputError::new(format!(
                "{origin}: field `traceEvents` is missing or not a list"
            ))
            .with_hint(TRACE_HINT))
        }
        Top::Other => {
            return Err(InputError::new(format!(
                "{origin}: expected a JSON object with `traceEvents`"
            ))
            .with_hint(TRACE_HINT))
        }
    }
    if let Some(e) = events.invalid {
        return Err(e);
    }
    let Events {
        ops,
        mut kernels,
        runtime,
        mut steps,
        ..
    } = events;
    steps.sort_unstable();
    steps.dedup();
    let steps = (steps.len() as u64).max(1);
    if ops.is_empty() && kernels.is_empty() {
        return Err(InputError::new(format!(
            "{origin}: the trace has no `kernel` and no `cpu_op` events: nothing to import"
        ))
        .with_hint(
            "profile with activities=[ProfilerActivity.CPU] (and CUDA on a GPU) and \
             record_shapes=True, and export while the profiler holds the steps",
        ));
    }
    let parent = parents(&ops);
    let mut notes = Vec::new();
    if !ops.is_empty() && ops.iter().all(|o| !o.args.contains_key("Input Dims")) {
        notes.push(
            "no operator has `Input Dims`: record with record_shapes=True to cost them by shape"
                .to_string(),
        );
    }
    let profile = if kernels.is_empty() {
        cpu_profile(origin, &ops, &parent, &mut notes)?
    } else {
        kernels.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        gpu_profile(origin, &ops, &parent, &runtime, &kernels, &mut notes)?
    };
    let (kernels, uncosted, total) = profile;
    notes.extend(super::zero_division_notes(&kernels));
    Ok(Profile {
        format: ProfileFormat::TorchTrace,
        origin: origin.to_string(),
        kernels,
        steps,
        uncosted,
        total_time: total,
        notes,
    })
}

type Parts = (Vec<ProfiledKernel>, Vec<UncostedOps>, Seconds);

fn cpu_profile(
    origin: &str,
    ops: &[Event],
    parent: &[Option<usize>],
    notes: &mut Vec<String>,
) -> Result<Parts, InputError> {
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by(|&a, &b| {
        ops[a]
            .ts
            .total_cmp(&ops[b].ts)
            .then(ops[b].dur.total_cmp(&ops[a].dur))
    });
    let claimed = claims(origin, ops, parent, &order)?;
    let mut kernels = Vec::new();
    for &i in order.iter().filter(|&&i| claimed[i]) {
        let e = &ops[i];
        kernels.push(costed_kernel(
            e.name.clone(),
            e.index,
            Seconds(e.dur / 1e6),
            framework_op(origin, e)?,
            1.0,
            false,
        ));
    }
    // Time of each top-level operator not inside a costed one, by name. `order` holds every
    // parent before its children, so each root is known when its children are reached.
    let mut root: Vec<usize> = (0..ops.len()).collect();
    for &i in &order {
        if let Some(p) = parent[i] {
            root[i] = root[p];
        }
    }
    let mut inside = vec![0.0f64; ops.len()];
    for i in 0..ops.len() {
        if claimed[i] {
            inside[root[i]] += ops[i].dur;
        }
    }
    let mut uncosted: Vec<UncostedOps> = Vec::new();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    let mut total = 0.0;
    for i in (0..ops.len()).filter(|&i| parent[i].is_none()) {
        total += ops[i].dur;
        let rest = ops[i].dur - inside[i];
        if claimed[i] || rest <= 0.0 {
            continue;
        }
        match by_name.get(ops[i].name.as_str()) {
            Some(&u) => {
                uncosted[u].count += 1;
                uncosted[u].time += Seconds(rest / 1e6);
            }
            None => {
                by_name.insert(&ops[i].name, uncosted.len());
                uncosted.push(UncostedOps {
                    name: ops[i].name.clone(),
                    count: 1,
                    time: Seconds(rest / 1e6),
                });
            }
        }
    }
    uncosted.sort_by(|a, b| b.time.get().total_cmp(&a.time.get()));
    if kernels.is_empty() {
        notes.push(
            "no operator could be costed by shape: nothing to place on a roofline".to_string(),
        );
    }
    Ok((kernels, uncosted, Seconds(total / 1e6)))
}

/// Which operators a CPU trace counts: the costed ones with no counted operator around them.
/// `order` (by start, longest first) visits every parent before its children, so whether an
/// ancestor is counted is known, once per operator, when the operator is reached: O(n).
fn claims(
    origin: &str,
    ops: &[Event],
    parent: &[Option<usize>],
    order: &[usize],
) -> Result<Vec<bool>, InputError> {
    let mut claimed = vec![false; ops.len()];
    // Whether some ancestor of the operator is claimed.
    let mut under_claim = vec![false; ops.len()];
    for &i in order {
        if let Some(p) = parent[i] {
            under_claim[i] = claimed[p] || under_claim[p];
        }
        if !under_claim[i] && is_costed(origin, &ops[i])? {
            claimed[i] = true;
        }
    }
    Ok(claimed)
}

/// An f64 ordered by [`f64::total_cmp`] (durations here are finite and ≥ 0).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Total(f64);

impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Total {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// For each query `(thread, t)`, the innermost operator around it: of the operators on that
/// thread with `ts ≤ t ≤ end + tolerance`, the shortest, the first in `ops` on a tie.
///
/// A sweep line per thread: queries and operators by time; an operator enters a min-heap (by
/// duration, then index) when it starts at or before the query, and leaves it, lazily, once it
/// ends before the query. `t − tolerance(t)` grows with `t`, so an operator ended before one
/// query has ended before every later one. O((n + q) log n) in all, against O(n·q) for a scan of
/// every operator per query.
fn innermost_around(ops: &[Event], queries: &[Option<(&str, f64)>]) -> Vec<Option<usize>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut found = vec![None; queries.len()];
    let mut by_thread: HashMap<&str, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (q, query) in queries.iter().enumerate() {
        if let Some((thread, _)) = query {
            by_thread.entry(thread).or_default().1.push(q);
        }
    }
    for (i, o) in ops.iter().enumerate() {
        if let Some(entry) = by_thread.get_mut(o.thread.as_str()) {
            entry.0.push(i);
        }
    }
    let at = |q: usize| queries[q].map_or(0.0, |(_, t)| t);
    for (_, (mut on_thread, mut asked)) in by_thread {
        on_thread.sort_by(|&a, &b| ops[a].ts.total_cmp(&ops[b].ts));
        asked.sort_by(|&a, &b| at(a).total_cmp(&at(b)));
        let mut open: BinaryHeap<Reverse<(Total, usize)>> = BinaryHeap::new();
        let mut next = 0;
        for q in asked {
            let t = at(q);
            while next < on_thread.len() && ops[on_thread[next]].ts <= t {
                let i = on_thread[next];
                open.push(Reverse((Total(ops[i].dur), i)));
                next += 1;
            }
            while let Some(&Reverse((_, i))) = open.peek() {
                if t <= ops[i].end() + time_tolerance(t) {
                    break;
                }
                open.pop();
            }
            found[q] = open.peek().map(|&Reverse((_, i))| i);
        }
    }
    found
}

/// Each kernel's operator: the `cpu_op` of its `External id`, else the innermost one around its
/// launch; then the nearest operator out from it that we can cost, else that operator itself.
fn link_kernels(
    origin: &str,
    ops: &[Event],
    parent: &[Option<usize>],
    runtime: &[Event],
    kernels: &[Event],
) -> Result<Vec<Option<usize>>, InputError> {
    let by_external: HashMap<u64, usize> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.arg_u64("External id").map(|x| (x, i)))
        .collect();
    let launches: HashMap<u64, &Event> = runtime
        .iter()
        .filter_map(|e| e.arg_u64("correlation").map(|c| (c, e)))
        .collect();
    let direct: Vec<Option<usize>> = kernels
        .iter()
        .map(|k| {
            k.arg_u64("External id")
                .and_then(|x| by_external.get(&x).copied())
        })
        .collect();
    let queries: Vec<Option<(&str, f64)>> = kernels
        .iter()
        .zip(&direct)
        .map(|(k, d)| match d {
            Some(_) => None,
            None => k
                .arg_u64("correlation")
                .and_then(|c| launches.get(&c))
                .map(|l| (l.thread.as_str(), l.ts)),
        })
        .collect();
    let around = innermost_around(ops, &queries);
    // Whether each operator can be costed, and the nearest costed operator out from it, each
    // found once: a walk out stops at the first operator already known.
    let mut costed: Vec<Option<bool>> = vec![None; ops.len()];
    let mut nearest: Vec<Option<Option<usize>>> = vec![None; ops.len()];
    let mut linked = Vec::with_capacity(kernels.len());
    let mut path = Vec::new();
    for (d, a) in direct.iter().zip(&around) {
        let op = d.or(*a);
        let mut cur = op;
        let mut answer = None;
        path.clear();
        while let Some(i) = cur {
            if let Some(n) = nearest[i] {
                answer = n;
                break;
            }
            let c = match costed[i] {
                Some(c) => c,
                None => {
                    let c = is_costed(origin, &ops[i])?;
                    costed[i] = Some(c);
                    c
                }
            };
            path.push(i);
            if c {
                answer = Some(i);
                break;
            }
            cur = parent[i];
        }
        for &i in &path {
            nearest[i] = Some(answer);
        }
        linked.push(answer.or(op));
    }
    Ok(linked)
}

fn gpu_profile(
    origin: &str,
    ops: &[Event],
    parent: &[Option<usize>],
    runtime: &[Event],
    kernels: &[Event],
    notes: &mut Vec<String>,
) -> Result<Parts, InputError> {
    let linked = link_kernels(origin, ops, parent, runtime, kernels)?;
    // Kernels of one operator share its cost by duration.
    let mut per_op: HashMap<usize, (f64, usize)> = HashMap::new();
    for (k, l) in kernels.iter().zip(&linked) {
        if let Some(i) = l {
            let e = per_op.entry(*i).or_insert((0.0, 0));
            e.0 += k.dur;
            e.1 += 1;
        }
    }
    let shared = per_op.values().filter(|(_, n)| *n > 1).count();
    if shared > 0 {
        notes.push(format!(
            "{shared} operator(s) launched more than one kernel: each operator's FLOPs and bytes \
             are shared between its kernels in proportion to their durations"
        ));
    }
    let mut out = Vec::with_capacity(kernels.len());
    let mut unlinked = 0;
    for (k, l) in kernels.iter().zip(&linked) {
        let lname = k.name.to_ascii_lowercase();
        let tensor_cores = TENSOR_CORE_NAMES.iter().any(|t| lname.contains(t));
        let duration = Seconds(k.dur / 1e6);
        match l {
            Some(i) => {
                let total = per_op.get(i).map_or(k.dur, |e| e.0);
                let share = if total > 0.0 { k.dur / total } else { 1.0 };
                out.push(costed_kernel(
                    k.name.clone(),
                    k.index,
                    duration,
                    framework_op(origin, &ops[*i])?,
                    share,
                    tensor_cores,
                ));
            }
            None => {
                unlinked += 1;
                out.push(ProfiledKernel {
                    name: k.name.clone(),
                    index: k.index,
                    duration,
                    flops: Vec::new(),
                    tensor_instructions: None,
                    bytes_read: None,
                    bytes_written: None,
                    l2_bytes: None,
                    compute: None,
                    cost_source: CostSource::Unknown,
                    op: None,
                    shaped_as: None,
                });
            }
        }
    }
    if unlinked > 0 {
        notes.push(format!(
            "{unlinked} kernel(s) link to no operator (no `External id` or launch with their \
             `correlation`): their time is kept, their cost unknown"
        ));
    }
    let total = out.iter().map(|k| k.duration).sum();
    Ok((out, Vec::new(), total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(events: &str) -> String {
        format!("{{\"traceEvents\": [{events}]}}")
    }

    const MM: &str = r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50,
        "args":{"External id":7,"Input Dims":[[64,256],[256,688]],"Input type":["float","float"]}}"#;

    #[test]
    fn cpu_trace_claims_the_outermost_costed_operator() -> Result<(), Box<dyn std::error::Error>> {
        // aten::linear [1,64,256]·[688,256] (100 µs) holds aten::mm (50 µs): one kernel, the
        // linear, 2·64·688·256 FLOP. A view outside (5 µs) is uncosted time.
        let lin = r#"{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":100,
            "args":{"External id":6,"Input Dims":[[1,64,256],[688,256],[]],"Input type":["float","float",""]}}"#;
        let view = r#"{"ph":"X","cat":"cpu_op","name":"aten::view","pid":1,"tid":1,"ts":120,"dur":5,
            "args":{"Input Dims":[[1,64,256],[]],"Input type":["float","ScalarList"]}}"#;
        let t = trace(&format!("{lin},{MM},{view}"));
        let p = parse(&t, "t.json")?;
        assert_eq!(p.kernels.len(), 1);
        let k = &p.kernels[0];
        assert_eq!(k.name, "aten::linear");
        assert_eq!(k.duration, Seconds(100e-6));
        assert_eq!(k.total_flops().get(), 2.0 * 64.0 * 688.0 * 256.0);
        assert_eq!(k.cost_source, CostSource::CostModel);
        assert_eq!(p.uncosted[0].name, "aten::view");
        assert!((p.total_time.get() - 105e-6).abs() < 1e-15);
        assert_eq!(p.steps, 1);
        Ok(())
    }

    #[test]
    fn a_child_ending_on_its_parents_nanosecond_nests_at_absolute_times(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // Kineto's absolute µs: the linear runs 5107416643395.255 + 495.435; its mm starts at
        // …3617.949 and runs 272.741, ending on the same ns, yet the f64 sum lands 0.98 ns
        // (one step) past the linear's end. Still one kernel, the linear.
        let lin = r#"{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":5107416643395.255,"dur":495.435,
            "args":{"Input Dims":[[1,64,256],[688,256],[]],"Input type":["float","float",""]}}"#;
        let mm = r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":5107416643617.949,"dur":272.741,
            "args":{"Input Dims":[[64,256],[256,688]],"Input type":["float","float"]}}"#;
        let (parent_end, child_end) = std::hint::black_box((
            5107416643395.255f64 + 495.435,
            5107416643617.949f64 + 272.741,
        ));
        assert!(child_end > parent_end);
        let p = parse(&trace(&format!("{lin},{mm}")), "t.json")?;
        assert_eq!(p.kernels.len(), 1);
        assert_eq!(p.kernels[0].name, "aten::linear");
        assert!((p.total_time.get() - 495.435e-6).abs() < 1e-15);
        Ok(())
    }

    #[test]
    fn gpu_kernels_link_by_external_id_and_split_by_duration(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let k1 = r#"{"ph":"X","cat":"kernel","name":"sm80_xmma_gemm_f32f32_tf32","pid":0,"tid":7,"ts":100,"dur":30,"args":{"External id":7,"correlation":1}}"#;
        let k2 = r#"{"ph":"X","cat":"kernel","name":"splitKreduce","pid":0,"tid":7,"ts":131,"dur":10,"args":{"External id":7,"correlation":2}}"#;
        let p = parse(&trace(&format!("{MM},{k1},{k2}")), "g.json")?;
        assert_eq!(p.kernels.len(), 2);
        let f = 2.0 * 64.0 * 688.0 * 256.0;
        // 30/(30+10) and 10/(30+10) of the GEMM's FLOPs.
        assert_eq!(p.kernels[0].total_flops().get(), f * 0.75);
        assert_eq!(p.kernels[1].total_flops().get(), f * 0.25);
        assert_eq!(p.kernels[0].compute, Some(Compute::Matrix(Precision::Tf32)));
        assert!(p.notes.iter().any(|n| n.contains("more than one kernel")));
        Ok(())
    }

    /// A small deterministic generator (xorshift64*), so the generated traces are the same on
    /// every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn op_event(index: usize, thread: u64, ts: f64, dur: f64, costed: bool, ext: u64) -> Event {
        let args = if costed {
            serde_json::json!({"External id": ext, "Input Dims": [[64, 256], [256, 688]],
                               "Input type": ["float", "float"]})
        } else {
            serde_json::json!({"External id": ext, "Input Dims": [[64, 256], []],
                               "Input type": ["float", "ScalarList"]})
        };
        Event {
            index,
            cat: Cat::CpuOp,
            name: if costed { "aten::mm" } else { "aten::view" }.into(),
            ts,
            dur,
            thread: format!("1/{thread}"),
            args: args.as_object().cloned().unwrap_or_default(),
        }
    }

    /// Operators on three threads, nested (a child inside a random earlier operator, sometimes
    /// ending on its parent's end), overlapping (a random interval over others) and repeated
    /// (the same start and duration twice); some at Kineto's absolute µs, where the 1 ns
    /// tolerance is a few f64 steps. Kernels link by `External id`, by a launch inside, between
    /// or outside the operators, or not at all.
    fn generated(
        seed: u64,
        n_ops: usize,
        n_kernels: usize,
    ) -> (Vec<Event>, Vec<Event>, Vec<Event>) {
        let mut r = Rng(seed);
        let base = if seed.is_multiple_of(2) {
            0.0
        } else {
            5_107_416_643_395.255
        };
        let mut ops: Vec<Event> = Vec::new();
        for i in 0..n_ops {
            let thread = r.below(3);
            let costed = r.below(3) == 0;
            let on_thread: Vec<usize> = (0..ops.len())
                .filter(|&j| ops[j].thread == format!("1/{thread}"))
                .collect();
            let (ts, dur) = match r.below(4) {
                0 | 1 if !on_thread.is_empty() => {
                    let p = &ops[on_thread[r.below(on_thread.len() as u64) as usize]];
                    let ts = p.ts + (p.dur * r.unit() * 4.0).round() / 4.0;
                    let dur = if r.below(4) == 0 {
                        p.end() - ts
                    } else {
                        ((p.end() - ts) * r.unit() * 4.0).floor() / 4.0
                    };
                    (ts, dur.max(0.0))
                }
                2 if !ops.is_empty() => {
                    let p = &ops[r.below(ops.len() as u64) as usize];
                    (p.ts, p.dur)
                }
                _ => (
                    base + r.below(4000) as f64 * 0.25,
                    r.below(800) as f64 * 0.25,
                ),
            };
            ops.push(op_event(i, thread, ts, dur, costed, 1000 + i as u64));
        }
        let mut runtime = Vec::new();
        let mut kernels = Vec::new();
        for k in 0..n_kernels {
            let mut args = Map::new();
            match r.below(4) {
                0 if !ops.is_empty() => {
                    let ext = 1000 + r.below(ops.len() as u64);
                    args.insert("External id".into(), ext.into());
                }
                1 | 2 => {
                    let t = if !ops.is_empty() && r.below(2) == 0 {
                        let o = &ops[r.below(ops.len() as u64) as usize];
                        if r.below(3) == 0 {
                            o.end()
                        } else {
                            o.ts + o.dur * r.unit()
                        }
                    } else {
                        base + r.below(4400) as f64 * 0.25
                    };
                    runtime.push(Event {
                        index: n_ops + n_kernels + k,
                        cat: Cat::Runtime,
                        name: "cudaLaunchKernel".into(),
                        ts: t,
                        dur: 1.0,
                        thread: format!("1/{}", r.below(3)),
                        args: serde_json::json!({"correlation": k})
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                    });
                    args.insert("correlation".into(), (k as u64).into());
                }
                _ => {}
            }
            kernels.push(Event {
                index: n_ops + k,
                cat: Cat::Kernel,
                name: format!("kernel_{k}"),
                ts: base + k as f64,
                dur: 1.0 + r.below(10) as f64,
                thread: "0/7".into(),
                args,
            });
        }
        (ops, runtime, kernels)
    }

    /// The join as first written: every operator scanned for each launch, each walk out from a
    /// kernel's operator done again for every kernel. The reference for [`link_kernels`].
    fn reference_link(
        ops: &[Event],
        parent: &[Option<usize>],
        runtime: &[Event],
        kernels: &[Event],
    ) -> Vec<Option<usize>> {
        let by_external: HashMap<u64, usize> = ops
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.arg_u64("External id").map(|x| (x, i)))
            .collect();
        let launches: HashMap<u64, &Event> = runtime
            .iter()
            .filter_map(|e| e.arg_u64("correlation").map(|c| (c, e)))
            .collect();
        let around = |thread: &str, t: f64| {
            ops.iter()
                .enumerate()
                .filter(|(_, o)| {
                    o.thread == thread && o.ts <= t && t <= o.end() + time_tolerance(t)
                })
                .min_by(|a, b| a.1.dur.total_cmp(&b.1.dur))
                .map(|(i, _)| i)
        };
        kernels
            .iter()
            .map(|k| {
                let op = k
                    .arg_u64("External id")
                    .and_then(|x| by_external.get(&x).copied())
                    .or_else(|| {
                        k.arg_u64("correlation")
                            .and_then(|c| launches.get(&c))
                            .and_then(|l| around(&l.thread, l.ts))
                    });
                let mut cur = op;
                while let Some(i) = cur {
                    if is_costed("t", &ops[i]).unwrap_or(false) {
                        return Some(i);
                    }
                    cur = parent[i];
                }
                op
            })
            .collect()
    }

    /// The CPU claim as first written: the whole chain of parents walked for every operator.
    fn reference_claims(ops: &[Event], parent: &[Option<usize>], order: &[usize]) -> Vec<bool> {
        let mut claimed = vec![false; ops.len()];
        for &i in order {
            let mut above = false;
            let mut j = i;
            while let Some(p) = parent[j] {
                if claimed[p] {
                    above = true;
                    break;
                }
                j = p;
            }
            if !above && is_costed("t", &ops[i]).unwrap_or(false) {
                claimed[i] = true;
            }
        }
        claimed
    }

    #[test]
    fn the_sweep_join_matches_the_scan_on_generated_traces(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let mut linked_somewhere = 0;
        let mut claimed_somewhere = 0;
        for seed in 1..=200u64 {
            let (n_ops, n_kernels) = (1 + (seed as usize * 7) % 60, (seed as usize * 5) % 40);
            let (ops, runtime, kernels) = generated(seed, n_ops, n_kernels);
            let parent = parents(&ops);
            let got = link_kernels("t", &ops, &parent, &runtime, &kernels)?;
            let want = reference_link(&ops, &parent, &runtime, &kernels);
            assert_eq!(got, want, "seed {seed}: kernels' operators");
            linked_somewhere += got.iter().flatten().count();
            let mut order: Vec<usize> = (0..ops.len()).collect();
            order.sort_by(|&a, &b| {
                ops[a]
                    .ts
                    .total_cmp(&ops[b].ts)
                    .then(ops[b].dur.total_cmp(&ops[a].dur))
            });
            let got = claims("t", &ops, &parent, &order)?;
            assert_eq!(
                got,
                reference_claims(&ops, &parent, &order),
                "seed {seed}: claims"
            );
            claimed_somewhere += got.iter().filter(|c| **c).count();
        }
        // The generated traces exercise both joins, not only their empty cases.
        assert!(linked_somewhere > 1000, "{linked_somewhere}");
        assert!(claimed_somewhere > 1000, "{claimed_somewhere}");
        Ok(())
    }

    #[test]
    fn the_innermost_operator_around_a_launch_on_overlapping_operators() {
        // Thread 1: A [0, 100], B [10, 60] inside A, C [50, 150] overlapping both, D [50, 150]
        // the same as C. At 55 all four are open: B is the shortest (50). At 100: A (100), C
        // and D (100 each): A comes first in the list. At 120: C and D; C comes first. At 151:
        // none. On thread 2 nothing.
        let ops = vec![
            op_event(0, 1, 0.0, 100.0, false, 1),
            op_event(1, 1, 10.0, 50.0, false, 2),
            op_event(2, 1, 50.0, 100.0, false, 3),
            op_event(3, 1, 50.0, 100.0, false, 4),
        ];
        let q = [
            Some(("1/1", 55.0)),
            Some(("1/1", 100.0)),
            Some(("1/1", 120.0)),
            Some(("1/1", 151.0)),
            Some(("1/2", 55.0)),
            None,
        ];
        assert_eq!(
            innermost_around(&ops, &q),
            vec![Some(1), Some(0), Some(2), None, None, None]
        );
    }

    /// The events as read from the whole JSON value first, the way the reader worked before
    /// it streamed: the reference for [`Events`].
    fn events_via_value(text: &str) -> Vec<String> {
        let root: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let list = match root {
            Value::Array(a) => a,
            Value::Object(mut o) => match o.remove("traceEvents") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        list.into_iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let raw = RawEvent::deserialize(v).unwrap_or(RawEvent::NotObject);
                event("t", i, raw).ok().flatten()
            })
            .filter(|e| matches!(e.cat, Cat::CpuOp | Cat::Kernel | Cat::Runtime))
            .map(|e| format!("{e:?}"))
            .collect()
    }

    fn events_streamed(text: &str) -> Vec<String> {
        let mut events = Events::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let _ = TopSeed {
            origin: "t",
            events: &mut events,
        }
        .deserialize(&mut de);
        // `Events` sorts by kind; the reference keeps trace order: compare as sets by index.
        let mut all: Vec<Event> = events
            .ops
            .into_iter()
            .chain(events.kernels)
            .chain(events.runtime)
            .collect();
        all.sort_by_key(|e| e.index);
        all.iter().map(|e| format!("{e:?}")).collect()
    }

    #[test]
    fn the_streaming_reader_keeps_what_the_json_value_holds(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../../shared/refs/samples/torch_profiler_trace_excerpt_hta_backward_thread.json",
        );
        let hta = std::fs::read_to_string(sample)?;
        let kept = events_streamed(&hta);
        // Its cpu_ops, kernels and runtime events: 5 (the user_annotation is a step, not kept).
        assert_eq!(kept.len(), 5, "{kept:?}");
        assert_eq!(kept, events_via_value(&hta));
        // A bare list; metadata and flow events among them; unknown keys, strings for numbers;
        // `traceEvents` given twice (the last counts, as in a JSON object).
        for text in [
            format!("[{MM}, {{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{{\"name\":\"p\"}}}}]"),
            format!("{{\"schemaVersion\":1,\"traceEvents\":[{{\"ph\":\"s\",\"id\":1}},{MM}],\"deviceProperties\":[{{\"id\":0}}]}}"),
            r#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":"0","tid":7,"ts":"1.5","dur":"2","x":[1,{"y":2}]}]}"#.to_string(),
            format!("{{\"traceEvents\":[{MM}],\"traceEvents\":[{MM},{MM}]}}"),
        ] {
            assert_eq!(events_streamed(&text), events_via_value(&text), "{text}");
        }
        let e = parse(&trace(&format!("{MM}, 3")), "t.json").unwrap_err();
        assert!(
            e.message.contains("traceEvents[1] is not an object"),
            "{}",
            e.message
        );
        // An invalid event before a truncation: the truncation is named, as the JSON is read
        // whole before any event is checked.
        let e = parse("{\"traceEvents\": [3, {\"ph\":", "t.json").unwrap_err();
        assert!(e.message.contains("truncated"), "{}", e.message);
        Ok(())
    }

    #[test]
    fn bad_traces_name_the_field() {
        let e = parse("{\"traceEvents\": [", "t.json").unwrap_err();
        assert!(e.message.contains("truncated"), "{}", e.message);
        let e = parse("{\"traceEvents\": [}", "t.json").unwrap_err();
        assert!(e.message.contains("t.json: line 1"), "{}", e.message);
        let e = parse("{\"other\": []}", "t.json").unwrap_err();
        assert!(e.message.contains("`traceEvents`"), "{}", e.message);
        let e = parse(
            &trace(r#"{"ph":"X","cat":"kernel","name":"k","ts":1}"#),
            "t.json",
        )
        .unwrap_err();
        assert!(
            e.message.contains("traceEvents[0] (`k`): field `dur`"),
            "{}",
            e.message
        );
        let e = parse(
            &trace(r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":1,"dur":2}"#),
            "t.json",
        )
        .unwrap_err();
        assert!(
            e.message.contains("no `kernel` and no `cpu_op`"),
            "{}",
            e.message
        );
        let e = parse(
            &trace(
                r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":2,"args":{"Input Dims":[[-1,2]]}}"#,
            ),
            "t.json",
        )
        .unwrap_err();
        assert!(e.message.contains("`args.Input Dims[0]`"), "{}", e.message);
        let e = parse(
            &trace(r#"{"ph":"X","cat":"kernel","name":"k","ts":"inf","dur":1}"#),
            "t.json",
        )
        .unwrap_err();
        assert!(e.message.contains("field `ts` is inf"), "{}", e.message);
        let e = parse(
            &trace(r#"{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":"NaN"}"#),
            "t.json",
        )
        .unwrap_err();
        assert!(e.message.contains("field `dur` is NaN"), "{}", e.message);
    }
}
