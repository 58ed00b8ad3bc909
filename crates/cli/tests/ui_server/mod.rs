//! `roofline ui --port 0` as a child process, and a minimal HTTP/1.1 client for it; shared by
//! the API test and the browser test (each says `mod ui_server;`).

// Each test binary uses only some of these.
#![allow(dead_code)]

use std::error::Error;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// A running `roofline ui`, stopped when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/`, as the server printed it.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub address: String,
}

impl Server {
    /// Starts `roofline ui --port 0` and reads the address it prints on stderr.
    pub fn start() -> Result<Self> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_roofline"))
            .args(["ui", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let first = match lines.next() {
            Some(line) => line?,
            None => {
                let _ = child.kill();
                return Err("`roofline ui` printed nothing".into());
            }
        };
        // The rest of stderr is drained, so that the server never blocks writing to it.
        std::thread::spawn(move || lines.for_each(drop));
        let Some(url) = first.strip_prefix("serving ") else {
            let _ = child.kill();
            return Err(format!("`roofline ui` printed `{first}`").into());
        };
        let address = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        Ok(Self {
            child,
            url: url.to_string(),
            address,
        })
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Result<Answer> {
        request(&self.address, "GET", path, None)
    }

    /// `POST path` with a JSON body.
    pub fn post(&self, path: &str, body: &str) -> Result<Answer> {
        request(&self.address, "POST", path, Some(body))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Result<serde_json::Value> {
        Ok(serde_json::from_slice(&self.body)?)
    }

    pub fn text(&self) -> Result<String> {
        Ok(String::from_utf8(self.body.clone())?)
    }
}

/// One request on its own connection (`Connection: close`: the answer ends with it).
pub fn request(address: &str, method: &str, path: &str, body: Option<&str>) -> Result<Answer> {
    request_as(address, address, method, path, body)
}

/// [`request`] with `host` in the `Host` header.
pub fn request_as(
    host: &str,
    address: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<Answer> {
    let mut s = TcpStream::connect(address)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.unwrap_or("");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of the headers")?;
    let head = String::from_utf8(raw[..split].to_vec())?;
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .ok_or("no status line")?
        .parse()?;
    let mut content_type = String::new();
    let mut chunked = false;
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-type") {
                content_type = v.trim().to_string();
            }
            if k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked") {
                chunked = true;
            }
        }
    }
    let mut body = raw[split + 4..].to_vec();
    if chunked {
        body = unchunk(&body)?;
    }
    Ok(Answer {
        status,
        content_type,
        body,
    })
}

fn unchunk(mut raw: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..end])?.trim(), 16)?;
        if size == 0 {
            return Ok(out);
        }
        let start = end + 2;
        out.extend_from_slice(raw.get(start..start + size).ok_or("short chunk")?);
        raw = raw.get(start + size + 2..).ok_or("short chunk")?;
    }
}

/// `roofline WORDS…` run in-process: its stdout, or its error.
pub fn cli(words: &[&str]) -> std::result::Result<Vec<u8>, roofline_cli::Failure> {
    let argv: Vec<OsString> = std::iter::once("roofline")
        .chain(words.iter().copied())
        .map(OsString::from)
        .collect();
    let mut out = Vec::new();
    roofline_cli::run_captured(&argv, &mut out)?;
    Ok(out)
}
