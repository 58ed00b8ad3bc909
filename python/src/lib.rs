//! The native module `roofline._roofline`: [`analyze`] calls the typed API
//! (`roofline_cli::api::analyze`) with a request given as JSON text and returns its document as
//! JSON text; [`run`] runs one `roofline` command in this process and returns what the program
//! prints. An error becomes [`RooflineError`] (bad input, exit
//! code 2) or [`RooflineInternalError`] (an internal fault, exit code 1), each carrying the
//! CLI's `message`, `hint` and `code`. The package `roofline` (python/roofline) builds every
//! command line on top of it.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use roofline_cli::api::{AnalyzeRequest, ApiError};
use roofline_cli::Failure;
use std::ffi::OsString;

create_exception!(
    roofline,
    RooflineError,
    PyValueError,
    "Bad input or usage (the CLI's exit code 2): `message`, `hint` (or None) and `code` as the \
     CLI prints and returns them; `str(e)` is the CLI's `error:` and `hint:` lines."
);

create_exception!(
    roofline,
    RooflineInternalError,
    PyRuntimeError,
    "An internal fault (the CLI's exit code 1), with `message`, `hint` and `code` as \
     `RooflineError` has them."
);

/// Runs `roofline ARGS…` (the arguments after the program name) in this process, returning
/// what it writes to stdout.
///
/// # Errors
/// The CLI's [`Failure`]; output that is not UTF-8 is an internal fault (code 1).
pub fn run_args(args: &[String]) -> Result<String, Failure> {
    let argv: Vec<OsString> = std::iter::once(OsString::from("roofline"))
        .chain(args.iter().map(OsString::from))
        .collect();
    let mut out = Vec::new();
    roofline_cli::run_captured(&argv, &mut out)?;
    String::from_utf8(out).map_err(|e| Failure {
        message: format!("the output is not UTF-8: {e}"),
        hint: None,
        code: 1,
    })
}

/// The Python exception for `failure`: [`RooflineError`] for bad input (code 2),
/// [`RooflineInternalError`] otherwise; its `str()` is the CLI's `error:`/`hint:` text.
fn to_pyerr(py: Python<'_>, failure: &Failure) -> PyErr {
    let text = failure.to_string();
    let err = if failure.code == 2 {
        PyErr::new::<RooflineError, _>((text,))
    } else {
        PyErr::new::<RooflineInternalError, _>((text,))
    };
    let value = err.value(py);
    let attributes = value
        .setattr("message", &failure.message)
        .and_then(|()| value.setattr("hint", failure.hint.as_deref()))
        .and_then(|()| value.setattr("code", failure.code));
    match attributes {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// run(args: list[str]) -> str
/// --
///
/// Runs `roofline ARGS…` (without the program name) and returns what it prints on stdout.
/// The interpreter lock is released while the command runs.
///
/// Raises RooflineError (bad input, code 2) or RooflineInternalError (code 1) with the CLI's
/// message and hint.
#[pyfunction]
fn run(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    py.detach(move || run_args(&args))
        .map_err(|failure| to_pyerr(py, &failure))
}

/// The `analyze` document for `request`, the JSON text of an
/// [`roofline_cli::api::AnalyzeRequest`], as JSON text.
///
/// # Errors
/// The request refused (naming its field) or the analysis failed.
pub fn analyze_json(request: &str) -> Result<String, ApiError> {
    let request: AnalyzeRequest = roofline_cli::api::parse_request(request)?;
    Ok(roofline_cli::api::analyze(&request)?.to_json())
}

/// The Python exception for `e`: [`RooflineError`] (bad input, code 2) with `message`, `hint`,
/// `code` and `field` (the request's field at fault, or None).
fn api_pyerr(py: Python<'_>, e: &ApiError) -> PyErr {
    let err = PyErr::new::<RooflineError, _>((e.to_string(),));
    let value = err.value(py);
    let attributes = value
        .setattr("message", &e.message)
        .and_then(|()| value.setattr("hint", e.hint.as_deref()))
        .and_then(|()| value.setattr("code", 2u8))
        .and_then(|()| value.setattr("field", e.field.as_deref()));
    match attributes {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// analyze(request: str) -> str
/// --
///
/// The `analyze` document (JSON text, as `roofline analyze --format json` prints it) for
/// `request`, the JSON text of an analyze request (docs/schema/requests/analyze.schema.json).
/// The interpreter lock is released while it runs.
///
/// Raises RooflineError with the CLI's message and hint and `field`, the request's field at
/// fault (or None).
#[pyfunction]
#[pyo3(name = "analyze")]
fn analyze_py(py: Python<'_>, request: String) -> PyResult<String> {
    py.detach(move || analyze_json(&request))
        .map_err(|e| api_pyerr(py, &e))
}

/// The native part of the `roofline` package: `analyze`, `run`, `RooflineError`,
/// `RooflineInternalError`.
#[pymodule]
#[pyo3(name = "_roofline")]
mod native {
    #[pymodule_export]
    use super::analyze_py;
    #[pymodule_export]
    use super::run;
    #[pymodule_export]
    use super::RooflineError;
    #[pymodule_export]
    use super::RooflineInternalError;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output is the command's: the version line `roofline --version` prints, from the
    /// package version cargo gives.
    #[test]
    fn runs_a_command_and_returns_its_output() -> Result<(), Failure> {
        let out = run_args(&["--version".to_string()])?;
        assert_eq!(
            out.trim(),
            format!("roofline {}", env!("CARGO_PKG_VERSION"))
        );
        Ok(())
    }

    /// The typed call gives the command's document; an unknown field is refused by name.
    #[test]
    fn analyze_takes_a_json_request() -> Result<(), Box<dyn std::error::Error>> {
        let doc = analyze_json(r#"{"model": "gpt2", "hardware": "l4", "stage": "decode"}"#)?;
        let args = ["analyze", "gpt2", "--hardware", "l4", "--stage", "decode"];
        let mut want = args.map(String::from).to_vec();
        want.extend(["--format".into(), "json".into()]);
        assert_eq!(doc, run_args(&want)?);
        let e = match analyze_json(r#"{"batsh": 8}"#) {
            Err(e) => e,
            Ok(_) => return Err("an unknown field was taken".into()),
        };
        assert_eq!(e.field.as_deref(), Some("batsh"));
        Ok(())
    }

    /// An unknown model is bad input: code 2, a message naming it, a hint.
    #[test]
    fn bad_input_is_a_failure_with_code_2() -> Result<(), String> {
        let args = ["analyze", "no-such-model", "--format", "json"].map(String::from);
        let f = match run_args(&args) {
            Err(f) => f,
            Ok(out) => return Err(format!("an unknown model ran: {out}")),
        };
        assert_eq!(f.code, 2);
        assert!(f.message.contains("no-such-model"), "{}", f.message);
        assert!(f.hint.is_some());
        Ok(())
    }
}
